/** RFC 5424 messages and RFC 6587 octet counting, byte by byte, against hand-written known answers. */
import {expect} from 'chai'
import {octetCounted, syslogMessage} from '../../../src/services/forwarding/syslog-message.js'
import type {StoredEvent} from '../../../src/core/types.js'

const event: StoredEvent = {
  id: '0190a000-0000-7000-8000-000000000029',
  agent_id: 'support-bot',
  action_type: 'TOOL_CALL',
  action_name: 'refund "x"] \\ now',
  action_status: 'denied',
  timestamp: '2026-11-21T22:45:00.000Z',
  labels: {},
  sequence: 1,
  prev_hash: '0'.repeat(64),
  recorded_at: '2026-11-21T22:45:00.120Z',
  hash: 'ab'.repeat(32),
  index: 41,
}

describe('syslog messages (RFC 5424) and their framing (RFC 6587 3.4.1)', () => {
  it('writes HEADER, STRUCTURED-DATA with escaped values, then BOM and the event as JSON', () => {
    // PRI 108 = facility 13 (log audit) * 8 + severity 4 (warning, for `denied`); RFC 5424 6.2.1.
    const expected =
      '<108>1 2026-11-21T22:45:00.000Z host1 audit-trail - TOOL_CALL ' +
      '[atrail@32473 trail="default" index="41" id="0190a000-0000-7000-8000-000000000029" agent="support-bot" ' +
      `action_type="TOOL_CALL" action="refund \\"x\\"\\] \\\\ now" status="denied" hash="${'ab'.repeat(32)}"] ` +
      `\uFEFF${JSON.stringify(event)}`
    expect(syslogMessage(event, 'default', 'host1')).to.equal(expected)
  })

  it('chooses the severity by status: 6 for success, 3 for error', () => {
    expect(syslogMessage({...event, action_status: 'success'}, 'default', 'h')).to.match(/^<110>1 /)
    expect(syslogMessage({...event, action_status: 'error'}, 'default', 'h')).to.match(/^<107>1 /)
  })

  it('keeps HOSTNAME and MSGID to PRINTUSASCII of their lengths, NILVALUE when empty', () => {
    const message = syslogMessage({...event, action_type: `A${'B'.repeat(40)}`}, 'default', 'my host')
    expect(message.split(' ').slice(2, 6)).to.deep.equal(['my_host', 'audit-trail', '-', `A${'B'.repeat(31)}`])
    expect(syslogMessage(event, 'default', '').split(' ')[2]).to.equal('-')
  })

  it('counts octets of the UTF-8 message, not characters', () => {
    expect(octetCounted('<110>1 x').toString()).to.equal('8 <110>1 x')
    // "é" is 2 bytes, the BOM 3: 5 bytes in 2 characters.
    const framed = octetCounted('\uFEFFé')
    expect(framed.toString('hex')).to.equal(Buffer.from('5 \uFEFFé').toString('hex'))
    expect(framed.subarray(0, 2).toString()).to.equal('5 ')
  })
})
