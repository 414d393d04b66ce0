/**
 * A member given twice in a request body (RFC 7493 section 2.3): JSON.parse would keep the last
 * one, another reader the first, so the body is refused naming the member's path (docs/api.md).
 */
import {expect} from 'chai'
import {makeEvent, useTestApi} from '../support/harness.js'

const JSON_TYPE = {'content-type': 'application/json'}

/** A valid event's JSON text with `extra` spliced in right after the opening brace of `member`. */
function eventText(member: 'labels' | 'input' | '', extra: string): string {
  const text = JSON.stringify(makeEvent({labels: {env: 'prod'}, input: {query: {text: 'a'}}}))
  return member === '' ? `{${extra}${text.slice(1)}` : text.replace(`"${member}":{`, `"${member}":{${extra}`)
}

describe('request bodies with a member given twice', function () {
  const api = useTestApi({app: {otlp: true}})

  it('POST /v1/events: 400 invalid_json naming the path, at any depth, and nothing recorded', async () => {
    const cases: Array<[string, string]> = [
      [eventText('', '"agent_id":"someone-else",'), '$.agent_id'],
      [eventText('labels', '"env":"FAKE-staging",'), '$.labels.env'],
      [eventText('input', '"query":1,'), '$.input.query'],
      [eventText('input', '"n":{"a":1,"\\u0061":2},'), '$.input.n.a'],
      [eventText('labels', '"k8s.io/x":"1","k8s.io/x":"2",'), '$.labels["k8s.io/x"]'],
    ]
    for (const [raw, path] of cases) {
      JSON.parse(raw) // well-formed JSON: only the duplicate is wrong
      const res = await api.request('POST', '/v1/events', {raw, headers: JSON_TYPE})
      expect(res.status, raw).to.equal(400)
      expect(res.body.error.code).to.equal('invalid_json')
      expect(res.body.error.message).to.match(new RegExp(`^the request body has the member ${escape(path)} twice`))
      expect(res.body.error.details).to.deep.equal([{field: path, message: 'is given twice'}])
    }
    expect(await api.services.tree.size()).to.equal(0)
    // The same event without the duplicate is recorded.
    expect((await api.request('POST', '/v1/events', {raw: eventText('', ''), headers: JSON_TYPE})).status).to.equal(201)
  })

  it('POST /v1/batch: an element with a duplicate gets its own 400 naming it, the others are recorded', async () => {
    const good = (name: string) => JSON.stringify(makeEvent({action_name: name}))
    const elements = [
      good('a'),
      eventText('labels', '"env":"FAKE-staging",'),
      good('c'),
      eventText('', '"agent_id":"x",'),
    ]
    const raw = `[${elements.join(',')}]`
    const res = await api.request('POST', '/v1/batch', {raw, headers: JSON_TYPE})
    expect(res.status).to.equal(207)
    expect(res.body.map((r: {status: number}) => r.status)).to.deep.equal([201, 400, 201, 400])
    expect(res.body[1].error).to.deep.include({code: 'invalid_json'})
    expect(res.body[1].error.message).to.match(/^the request body has the member \$\[1\]\.labels\.env twice/)
    expect(res.body[3].error.details).to.deep.equal([{field: '$[3].agent_id', message: 'is given twice'}])
    const stored = (await api.request('GET', '/v1/events')).body
    expect(stored.map((e: {action_name: string}) => e.action_name)).to.deep.equal(['a', 'c'])
  })

  it('POST /v1/batch: a duplicate outside any element refuses the whole body', async () => {
    const res = await api.request('POST', '/v1/batch', {raw: '{"events":[],"events":[]}', headers: JSON_TYPE})
    expect(res.status).to.equal(400)
    expect(res.body.error.code).to.equal('invalid_json')
    expect(res.body.error.message).to.contain('the member $.events twice')
    expect(await api.services.tree.size()).to.equal(0)
  })

  it('POST /v1/policy/check and POST /v1/traces (OTLP/JSON): 400 invalid_json naming the path', async () => {
    const policy = '{"policies":[{"name":"a","type":"chain_integrity","type":"forbidden_action"}]}'
    const checked = await api.request('POST', '/v1/policy/check', {raw: policy, headers: JSON_TYPE})
    expect(checked.status).to.equal(400)
    expect(checked.body.error.message).to.contain('the member $.policies[0].type twice')
    const spans = '{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"a","name":"b"}]}]}]}'
    const traced = await api.request('POST', '/v1/traces', {raw: spans, headers: JSON_TYPE})
    expect(traced.status).to.equal(400)
    expect(traced.body.error.code).to.equal('invalid_json')
    expect(traced.body.error.message).to.contain('the member $.resourceSpans[0].scopeSpans[0].spans[0].name twice')
    expect(await api.services.tree.size()).to.equal(0)
  })
})

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
