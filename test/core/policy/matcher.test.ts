import {expect} from 'chai'
import fc from 'fast-check'
import {
  compileGlob,
  compileMatcher,
  describeMatcher,
  parseMatcher,
  type Matcher,
} from '../../../src/core/policy/matcher.js'
import type {FieldError} from '../../../src/core/errors.js'
import {makeTrail} from './trail.js'

/** Naive reference: an anchored regular expression with every character but `*` escaped. */
function globByRegex(pattern: string): RegExp {
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
    .join('[\\s\\S]*')
  return new RegExp(`^${body}$`)
}

describe('policy matcher globs', () => {
  const cases: Array<[string, string, boolean]> = [
    ['pii.*', 'pii.customers', true],
    ['pii.*', 'pii.', true],
    ['pii.*', 'xpii.a', false],
    ['pii.*', 'piiXa', false], // `.` is literal
    ['*.read', 'db.users.read', true],
    ['*.read', 'db.users.reader', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['ab*ba', 'aba', false], // head and tail may not overlap
    ['*x*yx', 'ayx', false], // a middle segment may not be taken from the tail
    ['*x*yx', 'xyx', true],
    ['*', '', true],
    ['**', 'anything', true],
    ['TOOL_CALL', 'TOOL_CALL', true],
    ['TOOL_CALL', 'TOOL_CALLS', false],
    ['(a|b)', '(a|b)', true],
    ['(a|b)', 'a', false],
    ['a?c', 'abc', false],
    ['[x]', '[x]', true],
  ]
  for (const [pattern, value, expected] of cases) {
    it(`${JSON.stringify(pattern)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(value)}`, () => {
      expect(compileGlob(pattern)(value)).to.equal(expected)
    })
  }

  it('agrees with a regular-expression reference on random patterns', () => {
    const text = (max: number) => fc.string({unit: fc.constantFrom('a', 'b', '.', '(', '\n'), maxLength: max})
    const pattern = fc.string({unit: fc.constantFrom('a', 'b', '.', '(', '*'), maxLength: 8})
    fc.assert(
      fc.property(pattern, text(12), (p, value) => {
        expect(compileGlob(p)(value)).to.equal(globByRegex(p).test(value))
      }),
      {numRuns: 2000},
    )
  })

  it('stays fast on a pattern that makes a backtracking regex explode', () => {
    const started = Date.now()
    expect(compileGlob('*a*a*a*a*a*a*a*b')('a'.repeat(5000))).to.equal(false)
    expect(Date.now() - started).to.be.below(500)
  })
})

describe('policy matchers', () => {
  const [event] = makeTrail([
    {
      agent_id: 'support-bot-1',
      action_type: 'DATA_ACCESS',
      action_name: 'pii.customers',
      action_status: 'denied',
      labels: {env: 'prod', team: 'cx'},
    },
  ])

  const matching: Matcher[] = [
    {},
    {agent_id: 'support-*'},
    {action_type: 'DATA_ACCESS', action_name: 'pii.*'},
    {action_status: 'denied'},
    {labels: {env: 'prod'}},
    {labels: {env: 'p*', team: '*'}},
    {agent_id: '*-1', action_type: '*_ACCESS', action_name: '*', action_status: 'd*', labels: {team: 'cx'}},
  ]
  for (const matcher of matching) {
    it(`${describeMatcher(matcher)} matches`, () => expect(compileMatcher(matcher)(event!)).to.equal(true))
  }

  const failing: Matcher[] = [
    {agent_id: 'support-bot'},
    {action_type: 'DATA_ACCESS', action_name: 'pii'}, // one of two fields fails
    {action_status: 'success'},
    {labels: {env: 'staging'}},
    {labels: {owner: '*'}}, // the key must be present even for `*`
    {labels: {env: 'prod', team: 'ops'}},
  ]
  for (const matcher of failing) {
    it(`${describeMatcher(matcher)} does not match`, () => expect(compileMatcher(matcher)(event!)).to.equal(false))
  }

  it('describes matchers for messages', () => {
    expect(describeMatcher({})).to.equal('any event')
    expect(describeMatcher({action_type: 'HUMAN_APPROVAL', labels: {scope: 'pii'}})).to.equal(
      'action_type=HUMAN_APPROVAL, labels.scope=pii',
    )
  })

  function problemsOf(value: unknown): FieldError[] {
    const problems: FieldError[] = []
    const parsed = parseMatcher(value, 'policies[0].match', (field, message) => problems.push({field, message}))
    expect(parsed === undefined).to.equal(problems.length > 0)
    return problems
  }

  it('accepts a valid matcher without reporting', () => {
    expect(problemsOf({action_type: 'X*', labels: {'k.8:-_': ''}})).to.deep.equal([])
  })

  it('reports every invalid part with its path', () => {
    const fields = problemsOf({action_typ: 'X', agent_id: '', action_name: 3, labels: {'bad key': 'x', ok: 5}}).map(
      (p) => p.field,
    )
    expect(fields).to.deep.equal([
      'policies[0].match.action_typ',
      'policies[0].match.agent_id',
      'policies[0].match.action_name',
      'policies[0].match.labels.bad key',
      'policies[0].match.labels.ok',
    ])
    expect(problemsOf('TOOL_CALL').map((p) => p.field)).to.deep.equal(['policies[0].match'])
    expect(problemsOf([{}]).map((p) => p.field)).to.deep.equal(['policies[0].match'])
    expect(problemsOf({labels: ['env']}).map((p) => p.field)).to.deep.equal(['policies[0].match.labels'])
  })
})

describe('policy matcher labels named like Object properties', () => {
  it('treats __proto__ and constructor as ordinary label keys', () => {
    const matcher = parseMatcher(JSON.parse('{"labels": {"__proto__": "x", "constructor": "*"}}'), 'm', () =>
      expect.fail('no problem expected'),
    )!
    const test = compileMatcher(matcher)
    // The first event lacks `__proto__`: a matcher that silently dropped that key would match it.
    const [plain, labelled] = makeTrail([
      {labels: {constructor: 'c'}},
      {labels: JSON.parse('{"__proto__": "x", "constructor": "c"}')},
    ])
    expect(test(plain!)).to.equal(false)
    expect(test(labelled!)).to.equal(true)
  })
})
