/**
 * What a redacted export never withholds (docs/verification.md 11): the members of service events,
 * and the `metadata` of a signed statement that names its signer only there.
 */
import {expect} from 'chai'
import {redactEvent} from '../../../src/core/erasure/index.js'
import type {StoredEvent} from '../../../src/core/types.js'

const ALL = ['input', 'output', 'metadata', 'error'] as const

function committed(overrides: Partial<StoredEvent>): StoredEvent {
  return {
    id: '00000000-0000-7000-8000-000000000001',
    agent_id: 'signer',
    action_type: 'SIGNED_STATEMENT',
    action_name: 'statement.register',
    action_status: 'success',
    timestamp: '2026-11-28T10:00:00.000Z',
    labels: {},
    input: {statement: 'AA=='},
    metadata: {kid: 'k1'},
    salts: {input: '00'.repeat(32), metadata: '11'.repeat(32)},
    commitments: {input: 'aa'.repeat(32), metadata: 'bb'.repeat(32)},
    sequence: 1,
    prev_hash: '0'.repeat(64),
    recorded_at: '2026-11-28T10:00:00.250Z',
    hash: 'cc'.repeat(32),
    index: 0,
    ...overrides,
  } as StoredEvent
}

describe('redaction never withholds what verification needs', () => {
  it('keeps the metadata of a statement whose kid is in metadata only', () => {
    const redacted = redactEvent(committed({}), ALL)
    expect(redacted.redacted).to.deep.equal(['input'])
    expect(redacted.metadata).to.deep.equal({kid: 'k1'})
    expect(redacted.salts).to.deep.equal({metadata: '11'.repeat(32)})
  })

  it('withholds both members of a statement that names its kid in a label', () => {
    const redacted = redactEvent(committed({labels: {kid: 'k1'}}), ALL)
    expect(redacted.redacted).to.deep.equal(['input', 'metadata'])
    expect(redacted).to.not.have.property('salts')
  })

  it('withholds nothing of a service event', () => {
    const key = committed({agent_id: 'audit-trail:keys', action_type: 'KEY_REGISTERED', labels: {kid: 'k1'}})
    expect(redactEvent(key, ALL)).to.equal(key)
  })
})
