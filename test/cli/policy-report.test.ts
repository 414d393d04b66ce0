import {expect} from 'chai'
import {escapeXml, formatPolicyReport} from '../../src/cli/policy-report.js'
import type {PolicyReport, RuleResult, Violation} from '../../src/core/policy/index.js'
import {parseXml} from '../support/xml.js'

const violation = (n: number, message = `violation number ${n}.`): Violation => ({
  event_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  agent_id: 'bot',
  sequence: n,
  message,
})

function result(name: string, type: string, violations: Violation[], count = violations.length): RuleResult {
  return {name, type, passed: count === 0, violation_count: count, violations}
}

const mixed: PolicyReport = {
  passed: false,
  events_checked: 1234,
  results: [
    result('chains-intact', 'chain_integrity', []),
    result('no-shell', 'forbidden_action', [
      violation(7, 'TOOL_CALL shell.exec by agent "bot" is a forbidden action.'),
    ]),
    result(
      'many',
      'max_rate',
      Array.from({length: 100}, (_, i) => violation(i + 1)),
      250,
    ),
    result('fresh', 'timestamp_freshness', [
      {event_id: null, agent_id: null, sequence: null, message: 'No timestamp has been issued for the Merkle root.'},
    ]),
  ],
}

describe('policy report formats', () => {
  describe('the XML checker used below', () => {
    const malformed = [
      '<a><b></a></b>',
      '<a x="1" x="2"/>',
      '<a>&bogus;</a>',
      '<a>1 < 2</a>',
      '<a b="<"/>',
      '<a>x</a><b/>',
      '<a>\u0001</a>',
      '<a b=1/>',
      '<a>',
    ]
    for (const xml of malformed) {
      it(`rejects ${JSON.stringify(xml)}`, () => expect(() => parseXml(xml)).to.throw(/not well-formed/))
    }
    it('reads attributes, children and references', () => {
      const root = parseXml('<?xml version="1.0"?>\n<a k="&lt;&#10;&#x41;&apos;"><b/>t&amp;u</a>')
      expect(root).to.deep.equal({
        name: 'a',
        attributes: {k: "<\nA'"},
        children: [{name: 'b', attributes: {}, children: [], text: ''}],
        text: 't&u',
      })
    })
  })

  describe('junit', () => {
    it('has one test case per rule and one failure per violated rule', () => {
      const root = parseXml(formatPolicyReport(mixed, 'junit'))
      expect(root.name).to.equal('testsuites')
      expect(root.attributes).to.include({tests: '4', failures: '3'})
      const [suite] = root.children
      expect(suite!.name).to.equal('testsuite')
      expect(suite!.attributes).to.include({name: 'audit-trail policy', tests: '4', failures: '3'})
      const cases = suite!.children.filter((child) => child.name === 'testcase')
      expect(cases.map((c) => [c.attributes.name, c.attributes.classname, c.children.length])).to.deep.equal([
        ['chains-intact', 'audit-trail.policy.chain_integrity', 0],
        ['no-shell', 'audit-trail.policy.forbidden_action', 1],
        ['many', 'audit-trail.policy.max_rate', 1],
        ['fresh', 'audit-trail.policy.timestamp_freshness', 1],
      ])
      const noShell = cases[1]!.children[0]!
      expect(noShell.name).to.equal('failure')
      expect(noShell.attributes.message).to.equal(
        '1 violation: TOOL_CALL shell.exec by agent "bot" is a forbidden action.',
      )
      expect(noShell.text).to.equal(
        '[event 00000000-0000-4000-8000-000000000007, sequence 7] TOOL_CALL shell.exec by agent "bot" is a ' +
          'forbidden action.',
      )
      const many = cases[2]!.children[0]!.text.split('\n')
      expect(many).to.have.length(101)
      expect(many[100]).to.equal('... and 150 more violations not listed')
      const properties = suite!.children.find((child) => child.name === 'properties')!
      expect(properties.children[0]!.attributes).to.deep.equal({name: 'events_checked', value: '1234'})
    })

    it('escapes names and messages so that they read back unchanged', () => {
      const awkward = 'a<b>&"c"\'d\'\ttab\nline\r\u00e9\u{1F600}'
      const report: PolicyReport = {
        passed: false,
        events_checked: 1,
        results: [result(awkward, 'forbidden_action', [violation(1, awkward)])],
      }
      const testcase = parseXml(formatPolicyReport(report, 'junit')).children[0]!.children.find(
        (c) => c.name === 'testcase',
      )!
      expect(testcase.attributes.name).to.equal(awkward)
      expect(testcase.children[0]!.attributes.message).to.equal(`1 violation: ${awkward}`)
      expect(testcase.children[0]!.text).to.equal(`[event 00000000-0000-4000-8000-000000000001, sequence 1] ${awkward}`)
    })

    it('replaces characters XML cannot carry at all', () => {
      expect(escapeXml('a\u0000b\u001bc\uFFFEd\uD800e')).to.equal('a\uFFFDb\uFFFDc\uFFFDd\uFFFDe')
      const report: PolicyReport = {
        passed: false,
        events_checked: 1,
        results: [result('ctl\u0007', 'forbidden_action', [violation(1, 'bell\u0007')])],
      }
      expect(() => parseXml(formatPolicyReport(report, 'junit'))).not.to.throw()
    })

    it('reports zero failures when everything passed', () => {
      const report: PolicyReport = {passed: true, events_checked: 0, results: [result('a', 'chain_integrity', [])]}
      const root = parseXml(formatPolicyReport(report, 'junit'))
      expect(root.attributes).to.include({tests: '1', failures: '0'})
    })
  })

  describe('text', () => {
    const text = formatPolicyReport(mixed, 'text')

    it('has a line per rule, violations under it and a summary', () => {
      const lines = text.split('\n')
      expect(lines[0]).to.equal('pass chains-intact [chain_integrity]')
      expect(lines[1]).to.equal('FAIL no-shell [forbidden_action] (1 violation)')
      expect(lines[2]).to.equal(
        '     - [event 00000000-0000-4000-8000-000000000007, sequence 7] TOOL_CALL shell.exec by agent "bot" is a ' +
          'forbidden action.',
      )
      expect(lines[3]).to.equal('FAIL many [max_rate] (250 violations)')
      expect(lines).to.include('     - ... and 150 more violations not listed')
      expect(lines).to.include('     - No timestamp has been issued for the Merkle root.')
      expect(lines.at(-1)).to.equal('Policy check failed: 3 of 4 rules violated over 1234 events.')
    })

    it('lists at most 100 violations even when the report carries more', () => {
      const long: PolicyReport = {
        passed: false,
        events_checked: 120,
        results: [
          result(
            'x',
            'forbidden_action',
            Array.from({length: 120}, (_, i) => violation(i)),
          ),
        ],
      }
      const lines = formatPolicyReport(long, 'text').split('\n')
      expect(lines.filter((line) => line.includes('[event '))).to.have.length(100)
      expect(lines).to.include('     - ... and 20 more violations not listed')
    })

    it('says when everything passed', () => {
      const report: PolicyReport = {passed: true, events_checked: 1, results: [result('a', 'chain_integrity', [])]}
      expect(formatPolicyReport(report, 'text').split('\n').at(-1)).to.equal(
        'Policy check passed: 1 rule over 1 event.',
      )
    })

    it('uses colour only when asked', () => {
      expect(text).not.to.contain('\u001b[')
      const coloured = formatPolicyReport(mixed, 'text', {color: true})
      expect(coloured).to.contain('\u001b[')
      expect(coloured.replace(/\u001b\[[0-9;]*m/g, '')).to.equal(text)
    })
  })

  it('json is the report itself', () => {
    expect(JSON.parse(formatPolicyReport(mixed, 'json'))).to.deep.equal(mixed)
  })
})
