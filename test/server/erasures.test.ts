/**
 * POST /v1/erasures and GET /v1/export?redact= over HTTP on both stores (docs/api.md): the answer's
 * shape, the `erase` scope, bad input answered 400 with nothing recorded, and no erased value in any
 * answer afterwards, the stream's replay included.
 */
import {expect} from 'chai'
import WebSocket from 'ws'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import type {EvidencePackage} from '../../src/core/evidence/package.js'
import {verifyPackage} from '../../src/core/evidence/verify.js'
import {makeEvent, useService} from '../support/harness.js'
import {forEachStore} from '../support/stores.js'
import {newMarker} from '../support/markers.js'

const ERASER = 'eraser-key-0123456789abcdef'
const WRITER = 'writer-key-0123456789abcdef'
const KEYS = `${ERASER} read,write,erase\n${WRITER} read,write\n`

/** Every message a stream subscriber gets until it has `count` events (replayed from index 0). */
async function replay(url: string, count: number): Promise<string> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream?from_index=0&access_token=${ERASER}`)
  const messages: string[] = []
  ws.on('message', (data) => messages.push(String(data)))
  const deadline = Date.now() + 10_000
  while (messages.filter((m) => m.startsWith('{"type":"event"')).length < count) {
    if (Date.now() > deadline) throw new Error(`replay stopped at ${messages.length} messages`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  ws.close()
  return messages.join('\n')
}

describe('POST /v1/erasures', function () {
  this.timeout(60_000)
  forEachStore((store) => {
    const service = useService({store, apiKeys: parseKeyFile(KEYS), app: {logError: () => {}}})

    async function call(method: string, path: string, body?: unknown, key = ERASER) {
      const response = await fetch(`${service.url}${path}`, {
        method,
        headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
        body: body === undefined ? undefined : JSON.stringify(body),
      })
      const text = await response.text()
      return {status: response.status, text, body: text === '' ? undefined : JSON.parse(text)}
    }

    async function seed(marker: string): Promise<string[]> {
      const events = [
        makeEvent({agent_id: 'support-bot', session_id: 's-1', input: {prompt: marker}, output: `re ${marker}`}),
        makeEvent({agent_id: 'support-bot', session_id: 's-1', metadata: {note: marker}}),
        makeEvent({agent_id: 'support-bot', session_id: 's-2', input: {prompt: 'another customer'}}),
      ]
      const {body} = await call('POST', '/v1/batch', events)
      return (body as Array<{event: {id: string}}>).map((r) => r.event.id)
    }

    it('answers 201 with the erasure event, the counts and what was skipped; nothing is left to find', async () => {
      const marker = newMarker()
      const [first] = await seed(marker)
      const answer = await call('POST', '/v1/erasures', {filter: {session_id: 's-1'}, reason: 'customer request'})
      expect(answer.status).to.equal(201)
      expect(Object.keys(answer.body)).to.deep.equal(['erasure', 'erased_events', 'erased_members', 'skipped'])
      expect(answer.body).to.deep.include({erased_events: 2, erased_members: 3, skipped: []})
      const erasure = answer.body.erasure
      expect(erasure).to.deep.include({agent_id: 'audit-trail:erasures', action_type: 'ERASURE', index: 3})
      expect(erasure.metadata).to.deep.include({filter: {session_id: 's-1'}, count: 2, reason: 'customer request'})
      const reads = await Promise.all(
        [
          '/v1/events?limit=1000',
          `/v1/events/${first}`,
          `/v1/search?q=${marker}`,
          '/v1/export',
          '/v1/agents',
          '/v1/stats',
        ].map((path) => call('GET', path)),
      )
      const policy = await call('POST', '/v1/policy/check', {
        policies: [{name: 'no-refunds', type: 'forbidden_action', match: {agent_id: 'support-bot'}}],
      })
      for (const read of [...reads, policy]) expect(read.status).to.be.within(200, 299)
      const searched = reads[2]!.body as {total: number; query: string}
      expect(searched.total).to.equal(0)
      const shown = reads.map((read, i) => (i === 2 ? JSON.stringify({...read.body, query: ''}) : read.text))
      expect([...shown, policy.text, await replay(service.url, 4)].join('\n')).to.not.include(marker)
      expect((await call('GET', '/v1/verify')).body).to.include({valid: true})
      const pkg = JSON.parse(reads[3]!.text) as EvidencePackage
      expect((await verifyPackage(pkg)).valid).to.equal(true)
    })

    it('answers 200 with no erasure when nothing is left to erase, and records nothing', async () => {
      const [first] = await seed(newMarker())
      expect((await call('POST', '/v1/erasures', {ids: [first], reason: 'r'})).status).to.equal(201)
      const size = (await call('GET', '/v1/merkle/root')).body.tree_size
      const again = await call('POST', '/v1/erasures', {ids: [first], reason: 'r'})
      expect(again.status).to.equal(200)
      expect(again.body).to.deep.equal({
        erasure: null,
        erased_events: 0,
        erased_members: 0,
        skipped: [{id: first, reason: 'already_erased'}],
      })
      expect((await call('GET', '/v1/merkle/root')).body.tree_size).to.equal(size)
    })

    it('refuses bad input (400) and a key without erase (403); nothing is recorded or erased', async () => {
      const marker = newMarker()
      const [first] = await seed(marker)
      const ids = Array.from({length: 10_001}, (_, i) => `0190c1a2-7b3c-7d4e-8f90-${String(i).padStart(12, '0')}`)
      const bad: Array<[unknown, string]> = [
        [{ids: [first]}, 'reason'],
        [{filter: {}, reason: 'r'}, 'filter'],
        [{ids: [first], members: ['input', 'prompt'], reason: 'r'}, 'members[1]'],
        [{ids, reason: 'r'}, 'ids'],
      ]
      for (const [body, field] of bad) {
        const answer = await call('POST', '/v1/erasures', body)
        expect(answer.status, field).to.equal(400)
        expect(answer.body.error.code).to.equal('validation_error')
        expect(answer.body.error.details.map((d: {field: string}) => d.field)).to.include(field)
      }
      const forbidden = await call('POST', '/v1/erasures', {ids: [first], reason: 'r'}, WRITER)
      expect(forbidden.status).to.equal(403)
      expect(forbidden.body.error.code).to.equal('forbidden')
      expect((await call('GET', '/v1/merkle/root')).body.tree_size).to.equal(3)
      expect((await call('GET', `/v1/events/${first}`)).text).to.include(marker)
    })

    it('GET /v1/export?redact= withholds members, lists them, and the package verifies', async () => {
      const marker = newMarker()
      await seed(marker)
      const redacted = await call('GET', '/v1/export?redact=input,output,metadata')
      expect(redacted.status).to.equal(200)
      expect(redacted.text).to.not.include(marker)
      const pkg = JSON.parse(redacted.text) as EvidencePackage
      expect(pkg.events.map((e) => e.redacted)).to.deep.equal([['input', 'output'], ['metadata'], ['input']])
      expect(pkg.events[0]).to.not.have.any.keys('input', 'output', 'salts')
      const partly = JSON.parse((await call('GET', '/v1/export?redact=output')).text) as EvidencePackage
      expect(partly.events[0]!.input).to.deep.equal({prompt: marker})
      expect(partly.events[0]!.salts).to.have.keys('input')
      const verdict = await verifyPackage(pkg)
      expect(verdict).to.include({valid: true, redacted_events: 3})
      const refused = await call('GET', '/v1/export?redact=inputs')
      expect(refused.status).to.equal(400)
      expect(refused.body.error.details[0].field).to.equal('redact')
    })
  })
})
