import {expect} from 'chai'
import {readFileSync} from 'node:fs'
import {AuditError} from '../../../src/core/errors.js'
import {parsePolicyDocument, parsePolicyScope, parsePolicyText, RULE_TYPES} from '../../../src/core/policy/index.js'

/** Runs `parse` and returns the AuditError it must throw. */
function rejection(parse: () => unknown): AuditError {
  try {
    parse()
  } catch (error) {
    expect(error).to.be.instanceOf(AuditError)
    return error as AuditError
  }
  throw new Error('expected the document to be rejected')
}

const EVERY_TYPE = [
  {name: 'chain', type: 'chain_integrity', description: 'every chain verifies'},
  {name: 'labels', type: 'required_labels', labels: ['ticket', 'env'], match: {action_type: 'DATA_ACCESS'}},
  {name: 'no-shell', type: 'forbidden_action', match: {action_name: 'shell.*'}},
  {
    name: 'allow',
    type: 'allowed_actions',
    match: [{action_type: 'LLM_CALL'}, {action_type: 'TOOL_CALL', action_name: 'web.*'}],
    agent_id: 'research-*',
  },
  {
    name: 'approval',
    type: 'require_preceding',
    match: {action_name: 'pii.*'},
    preceded_by: {action_type: 'HUMAN_APPROVAL'},
    within: '1h',
  },
  {name: 'failures', type: 'max_failure_rate', max: 0.05, min_events: 20, statuses: ['failure', 'error', 'timeout']},
  {name: 'rate', type: 'max_rate', match: {action_type: 'LLM_CALL'}, max: 60, per: '1m'},
  {name: 'fresh', type: 'timestamp_freshness', max_age: '1d'},
  {name: 'signed', type: 'signed_events', agent_id: 'payments-*'},
  {name: 'approved', type: 'require_approval', match: {action_name: 'payments.*'}},
]

describe('policy documents', () => {
  it('accepts one rule of each type and keeps the author’s shape', () => {
    const doc = parsePolicyDocument({
      policies: EVERY_TYPE,
      scope: {agent_id: 'bot', since: '2026-01-01T00:00:00Z', until: '2026-02-01T00:00:00+01:00'},
    })
    expect(doc.policies).to.deep.equal(EVERY_TYPE)
    expect(doc.policies.map((rule) => rule.type)).to.deep.equal(RULE_TYPES)
    expect(doc.scope).to.deep.equal({
      agent_id: 'bot',
      since: '2026-01-01T00:00:00Z',
      until: '2026-02-01T00:00:00+01:00',
    })
  })

  it('accepts the optional parameters being absent and an empty rule list', () => {
    const minimal = [
      {name: 'a', type: 'required_labels', labels: ['env']},
      {name: 'b', type: 'allowed_actions', match: [{}]},
      {name: 'c', type: 'require_preceding', match: {}, preceded_by: {}},
      {name: 'd', type: 'max_failure_rate', max: 0},
      {name: 'e', type: 'max_rate', match: {}, max: 0, per: '1s'},
    ]
    expect(parsePolicyDocument({policies: minimal}).policies).to.deep.equal(minimal)
    expect(parsePolicyDocument({policies: []})).to.deep.equal({policies: []})
  })

  // Each bad parameter: the field of the detail and the rule named in the message (docs/api.md: "400 naming the
  // rule").
  const badParameters: Array<[string, Record<string, unknown>, string]> = [
    ['required_labels without labels', {type: 'required_labels'}, 'labels'],
    ['required_labels with an empty list', {type: 'required_labels', labels: []}, 'labels'],
    ['required_labels with a bad key', {type: 'required_labels', labels: ['ok', 'not ok']}, 'labels[1]'],
    [
      'required_labels with a bad matcher',
      {type: 'required_labels', labels: ['env'], match: {status: 'x'}},
      'match.status',
    ],
    ['forbidden_action without match', {type: 'forbidden_action'}, 'match'],
    ['forbidden_action with a list of matchers', {type: 'forbidden_action', match: [{action_type: 'X'}]}, 'match'],
    ['allowed_actions with one matcher', {type: 'allowed_actions', match: {action_type: 'X'}}, 'match'],
    ['allowed_actions with an empty list', {type: 'allowed_actions', match: []}, 'match'],
    [
      'allowed_actions with a bad entry',
      {type: 'allowed_actions', match: [{}, {action_type: 7}]},
      'match[1].action_type',
    ],
    ['allowed_actions with a bad agent_id', {type: 'allowed_actions', match: [{}], agent_id: 5}, 'agent_id'],
    ['require_preceding without preceded_by', {type: 'require_preceding', match: {}}, 'preceded_by'],
    [
      'require_preceding with a bad window',
      {type: 'require_preceding', match: {}, preceded_by: {}, within: '1 hour'},
      'within',
    ],
    ['max_failure_rate above 1', {type: 'max_failure_rate', max: 1.5}, 'max'],
    ['max_failure_rate below 0', {type: 'max_failure_rate', max: -0.1}, 'max'],
    ['max_failure_rate as a string', {type: 'max_failure_rate', max: '0.1'}, 'max'],
    ['max_failure_rate with min_events 0', {type: 'max_failure_rate', max: 0.1, min_events: 0}, 'min_events'],
    [
      'max_failure_rate with a fractional min_events',
      {type: 'max_failure_rate', max: 0.1, min_events: 2.5},
      'min_events',
    ],
    ['max_failure_rate with a bad status', {type: 'max_failure_rate', max: 0.1, statuses: ['Failure']}, 'statuses[0]'],
    ['max_rate with a fractional max', {type: 'max_rate', match: {}, max: 1.5, per: '1m'}, 'max'],
    ['max_rate with a negative max', {type: 'max_rate', match: {}, max: -1, per: '1m'}, 'max'],
    ['max_rate without per', {type: 'max_rate', match: {}, max: 5}, 'per'],
    ['max_rate with a numeric per', {type: 'max_rate', match: {}, max: 5, per: 60}, 'per'],
    ['timestamp_freshness without max_age', {type: 'timestamp_freshness'}, 'max_age'],
    ['timestamp_freshness with 0s', {type: 'timestamp_freshness', max_age: '0s'}, 'max_age'],
    ['chain_integrity with an unknown parameter', {type: 'chain_integrity', agent: 'x'}, 'agent'],
    ['a parameter of another type', {type: 'forbidden_action', match: {}, within: '1h'}, 'within'],
    ['a non-string description', {type: 'chain_integrity', description: 3}, 'description'],
    ['an unknown type', {type: 'max_latency', max: 3}, 'type'],
    ['no type', {}, 'type'],
  ]
  for (const [title, params, field] of badParameters) {
    it(`rejects ${title} with 400 naming the rule and ${field}`, () => {
      const policies = [
        {name: 'fine', type: 'chain_integrity'},
        {name: 'other', type: 'chain_integrity', description: 'x'},
        {name: 'the-rule', ...params},
      ]
      const error = rejection(() => parsePolicyDocument({policies}))
      expect(error.code).to.equal('validation_error')
      expect(error.status).to.equal(400)
      expect(error.message).to.contain('"the-rule"')
      expect(error.details?.[0]?.field).to.equal(`policies[2].${field}`)
    })
  }

  it('words the 400 for a bad max as the contract example does', () => {
    const error = rejection(() =>
      parsePolicyDocument({policies: [{name: 'failures', type: 'max_failure_rate', max: 2}]}),
    )
    expect(error.details).to.deep.equal([{field: 'policies[0].max', message: 'must be a number between 0 and 1'}])
    expect(error.message).to.equal('policy rule "failures": policies[0].max must be a number between 0 and 1')
  })

  it('names a rule without a usable name by its position', () => {
    const error = rejection(() =>
      parsePolicyDocument({policies: [{name: 'ok', type: 'chain_integrity'}, {type: 'chain_integrity'}]}),
    )
    expect(error.message).to.contain('policies[1]')
    expect(error.details?.[0]?.field).to.equal('policies[1].name')
    expect(
      rejection(() => parsePolicyDocument({policies: [{name: '', type: 'chain_integrity'}]})).details?.[0]?.field,
    ).to.equal('policies[0].name')
    expect(rejection(() => parsePolicyDocument({policies: ['chain_integrity']})).details?.[0]?.field).to.equal(
      'policies[0]',
    )
  })

  it('requires unique names', () => {
    const error = rejection(() =>
      parsePolicyDocument({
        policies: [
          {name: 'x', type: 'chain_integrity'},
          {name: 'x', type: 'max_failure_rate', max: 0.1},
        ],
      }),
    )
    expect(error.details).to.have.length(1)
    expect(error.details?.[0]?.field).to.equal('policies[1].name')
    expect(error.message).to.contain('unique')
  })

  it('collects every problem of every rule in one error', () => {
    const error = rejection(() =>
      parsePolicyDocument({
        policies: [
          {name: 'a', type: 'max_rate', match: {}, max: -1, per: 'soon'},
          {name: 'b', type: 'nope'},
        ],
      }),
    )
    expect(error.details?.map((detail) => detail.field)).to.deep.equal([
      'policies[0].max',
      'policies[0].per',
      'policies[1].type',
    ])
    expect(error.message).to.match(/^policy rule "a": policies\[0\]\.max .* \(and 2 more problems\)$/)
  })

  it('rejects documents of the wrong shape', () => {
    for (const value of [null, 'policies', [], {}, {policies: {}}, {policies: [], version: 1}]) {
      const error = rejection(() => parsePolicyDocument(value))
      expect(error.code).to.equal('validation_error')
    }
    expect(rejection(() => parsePolicyDocument({policies: [], version: 1})).details?.[0]?.field).to.equal('version')
  })

  it('validates the scope', () => {
    const fieldOf = (scope: unknown) => rejection(() => parsePolicyDocument({policies: [], scope})).details?.[0]?.field
    // As GET /v1/events reads them: a plain date is midnight UTC; an impossible date is refused.
    expect(parsePolicyScope({since: '2026-01-01'})).to.deep.equal({since: '2026-01-01'})
    expect(fieldOf({since: '2026-02-30T00:00:00Z'})).to.equal('scope.since')
    expect(fieldOf({since: '2026-01-02', until: '2026-01-02T00:00:00Z'})).to.equal('scope.until')
    expect(fieldOf({since: '2026-01-01T00:00:00'})).to.equal('scope.since') // no timezone
    expect(fieldOf({until: 'yesterday'})).to.equal('scope.until')
    expect(fieldOf({since: '2026-01-02T00:00:00Z', until: '2026-01-02T00:00:00Z'})).to.equal('scope.until')
    expect(fieldOf({agent_id: ''})).to.equal('scope.agent_id')
    expect(fieldOf({agent: 'x'})).to.equal('scope.agent')
    expect(fieldOf('bot')).to.equal('scope')
    expect(parsePolicyScope({since: '2026-01-01T00:00:00.5-05:00'})).to.deep.equal({
      since: '2026-01-01T00:00:00.5-05:00',
    })
    expect(() => parsePolicyScope({until: 'never'})).to.throw(AuditError, 'scope.until')
  })
})

describe('policy text (JSON or YAML)', () => {
  it('reads YAML with times kept as strings', () => {
    const doc = parsePolicyText(
      [
        'scope:',
        '  since: 2026-01-01T00:00:00Z',
        'policies:',
        '  - name: fresh',
        '    type: timestamp_freshness',
        '    max_age: 1d',
      ].join('\n'),
    )
    expect(doc).to.deep.equal({
      policies: [{name: 'fresh', type: 'timestamp_freshness', max_age: '1d'}],
      scope: {since: '2026-01-01T00:00:00Z'},
    })
  })

  it('reads JSON, with or without a byte order mark', () => {
    const json = JSON.stringify({policies: EVERY_TYPE})
    expect(parsePolicyText(json).policies).to.deep.equal(EVERY_TYPE)
    expect(parsePolicyText(`\uFEFF${json}`).policies).to.deep.equal(EVERY_TYPE)
  })

  it('reads a file that starts with { or [ as JSON only: near-JSON is a syntax error, not YAML', () => {
    // Each is valid YAML; each would have passed as a policy had YAML been tried after JSON.
    for (const text of [
      '{"policies": [{"name": "a", "type": "chain_integrity"},]}',
      "{'policies': [{name: a, type: chain_integrity}]}",
      '{policies: [{name: c, type: chain_integrity}]}',
    ]) {
      const error = rejection(() => parsePolicyText(text))
      expect(error.code, text).to.equal('invalid_json')
      // (V8 gives a position for most syntax errors, not for "Unexpected token": then no line.)
      expect(error.message, text).to.match(/^The policy file is not valid JSON: /)
    }
  })

  it('rejects duplicate JSON keys rather than keeping the last, naming the place', () => {
    // JSON.parse alone would keep the empty second list: a gate with no rules that always passes.
    const error = rejection(() =>
      parsePolicyText('{"policies": [{"name": "a", "type": "chain_integrity"}],\n "policies": []}'),
    )
    expect(error.code).to.equal('invalid_json')
    expect(error.message).to.equal('The policy file is not valid: keys must be unique at line 2, column 2')
    const nested = rejection(() =>
      parsePolicyText('{"policies": [{"name": "a", "type": "chain_integrity", "type": "forbidden_action"}]}'),
    )
    expect(nested.message).to.match(/keys must be unique at line 1, column \d+/)
    // Equal values under different parents are fine.
    expect(
      parsePolicyText(
        '{"policies": [{"name": "a", "type": "chain_integrity"}, {"name": "b", "type": "chain_integrity"}]}',
      ).policies,
    ).to.have.length(2)
  })

  it('gives a JSON syntax error with its line and column', () => {
    const error = rejection(() => parsePolicyText('{\n  "policies": [\n    {"name": "a",}\n  ]\n}'))
    expect(error.code).to.equal('invalid_json')
    expect(error.status).to.equal(400)
    expect(error.message).to.match(/^The policy file is not valid JSON: .* \(line 3, column 18\)$/)
  })

  it('gives a YAML syntax error with its line', () => {
    const error = rejection(() => parsePolicyText('policies:\n  - name: a\n    type: [chain_integrity\n'))
    expect(error.code).to.equal('invalid_json')
    expect(error.message).to.match(/^The policy file is not valid YAML: .*line \d+/)
    expect(error.message).not.to.contain('\n')
  })

  it('rejects duplicate YAML keys rather than keeping the last', () => {
    const error = rejection(() => parsePolicyText('policies: []\npolicies: []\n'))
    expect(error.message).to.contain('not valid YAML')
  })

  it('rejects an empty file as a document without policies', () => {
    expect(rejection(() => parsePolicyText('')).details?.[0]?.field).to.equal('policies')
  })

  it('reports rule problems found in a file like those of a request', () => {
    const error = rejection(() =>
      parsePolicyText('policies:\n  - name: rate\n    type: max_rate\n    match: {}\n    max: 10\n    per: 1 minute\n'),
    )
    expect(error.code).to.equal('validation_error')
    expect(error.message).to.contain('"rate"')
    expect(error.details?.[0]?.field).to.equal('policies[0].per')
  })

  it('parses examples/policy.yaml: one rule of each type', () => {
    const doc = parsePolicyText(readFileSync(new URL('../../../examples/policy.yaml', import.meta.url), 'utf8'))
    expect(doc.policies.map((rule) => rule.type).sort()).to.deep.equal([...RULE_TYPES].sort())
  })

  it('parses every policy example in docs/policy.md', () => {
    const markdown = readFileSync(new URL('../../../docs/policy.md', import.meta.url), 'utf8')
    const blocks = markdown
      .split('```yaml\n')
      .slice(1)
      .map((rest) => rest.split('```')[0]!)
    const policyBlocks = blocks.filter((block) => /^policies:/m.test(block))
    expect(policyBlocks.length).to.be.at.least(8)
    for (const block of policyBlocks) expect(() => parsePolicyText(block), block).not.to.throw()
  })
})
