/**
 * Keys bound to agents on the write surfaces, the stream, held calls, erasures and forwarding
 * (docs/security.md, "Keys bound to agents"), on both stores: a write of another agent is 403
 * naming it (per element in a batch and an OTLP export) and records nothing.
 */
import {randomUUID} from 'node:crypto'
import {Metadata} from '@grpc/grpc-js'
import {OTLPTraceExporter as GrpcTraceExporter} from '@opentelemetry/exporter-trace-otlp-grpc'
import {resourceFromAttributes} from '@opentelemetry/resources'
import {SimpleSpanProcessor, TracerProvider} from '@opentelemetry/sdk-trace'
import {expect} from 'chai'
import WebSocket from 'ws'
import {parseDestination} from '../../src/services/forwarding/index.js'
import {makeEvent} from '../support/harness.js'
import {signedStatement, testAgentKey} from '../support/statements.js'
import {forEachStore} from '../support/stores.js'
import {A, ALL, TEAM, startBoundService, type BoundService} from './agent-binding-fixture.js'

/** The number of events of an agent, as the unbound key counts them. */
async function countOf(bound: BoundService, agent: string): Promise<number> {
  const {headers} = await bound.call(ALL, 'GET', `/v1/events?agent_id=${encodeURIComponent(agent)}`)
  return Number(headers.get('x-total-count'))
}

function span(agent: string, spanId: string): Record<string, unknown> {
  return {
    resource: {attributes: [{key: 'service.name', value: {stringValue: agent}}]},
    scopeSpans: [
      {
        spans: [
          {
            traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
            spanId,
            name: 'work',
            startTimeUnixNano: '1764000000000000000',
            endTimeUnixNano: '1764000001000000000',
          },
        ],
      },
    ],
  }
}

function heldCall(agent: string): Record<string, unknown> {
  return {
    agent_id: agent,
    action_type: 'TOOL_CALL',
    action_name: 'delete_file',
    call_event_id: randomUUID(),
    rule: 'hold-deletes',
    rule_type: 'forbidden_action',
  }
}

describe('keys bound to agents: writes, stream, held calls, erasures', () =>
  forEachStore((store) => {
    let bound: BoundService
    before(async () => {
      const destination = parseDestination('http://127.0.0.1:1/hook', 'agent_id=agent-b')
      bound = await startBoundService(store, {
        otlp: true,
        otlpGrpcPort: 0,
        forwarding: {destinations: [destination], retry: {initialMs: 50, maxMs: 100}, onError: () => {}},
      })
    })
    after(async () => bound?.close())

    it('refuses an event of another agent with 403 naming it, and records nothing', async () => {
      const before = await countOf(bound, 'agent-b')
      const refused = await bound.call(A, 'POST', '/v1/events', makeEvent({agent_id: 'agent-b'}))
      expect(refused.status).to.equal(403)
      expect(refused.body.error.code).to.equal('forbidden')
      expect(refused.body.error.message).to.include('agent-b')
      expect(await countOf(bound, 'agent-b')).to.equal(before)
      expect((await bound.call(TEAM, 'POST', '/v1/events', makeEvent({agent_id: 'team-a-new'}))).status).to.equal(201)
      expect((await bound.call(TEAM, 'POST', '/v1/events', makeEvent({agent_id: 'team-b-new'}))).status).to.equal(403)
    })

    it('refuses such an element of a batch alone (207) and records the others', async () => {
      const before = [await countOf(bound, 'agent-a'), await countOf(bound, 'agent-b')]
      const batch = ['agent-a', 'agent-b', 'agent-a'].map((agent) => makeEvent({agent_id: agent}))
      const {status, body} = await bound.call(A, 'POST', '/v1/batch', batch)
      expect(status).to.equal(207)
      expect(body.map((r: {status: number}) => r.status)).to.deep.equal([201, 403, 201])
      expect(body[1].error).to.include({code: 'forbidden'})
      expect(body[1].error.message).to.include('agent-b')
      expect([await countOf(bound, 'agent-a'), await countOf(bound, 'agent-b')]).to.deep.equal([
        before[0]! + 2,
        before[1],
      ])
    })

    it('rejects the spans of another agent in an OTLP export as a partial success', async () => {
      const before = await countOf(bound, 'agent-b')
      const request = {resourceSpans: [span('agent-a', '00f067aa0ba902b7'), span('agent-b', '00f067aa0ba902b8')]}
      const {status, body} = await bound.call(A, 'POST', '/v1/traces', request)
      expect(status).to.equal(200)
      expect(Number(body.partialSuccess.rejectedSpans)).to.equal(1)
      expect(body.partialSuccess.errorMessage).to.include('agent-b')
      expect(await countOf(bound, 'agent-b')).to.equal(before)
    })

    it('records over OTLP/gRPC the spans of its agents only', async () => {
      const before = await countOf(bound, 'agent-b')
      const metadata = new Metadata()
      metadata.set('authorization', `Bearer ${A}`)
      for (const agent of ['agent-a', 'agent-b']) {
        const exporter = new GrpcTraceExporter({url: `http://127.0.0.1:${bound.service.otlpGrpcPort}`, metadata})
        const provider = new TracerProvider({
          resource: resourceFromAttributes({'service.name': agent}),
          spanProcessors: [new SimpleSpanProcessor({exporter})],
        })
        provider.getTracer('test').startSpan(`grpc-${agent}`).end()
        await provider.forceFlush()
        await provider.shutdown()
      }
      const mine = await bound.call(ALL, 'GET', '/v1/events?agent_id=agent-a&limit=1000')
      expect(mine.body.map((e: {action_name: string}) => e.action_name)).to.include('grpc-agent-a')
      expect(await countOf(bound, 'agent-b')).to.equal(before)
    })

    it('replays and streams live only the key’s agents', async () => {
      const ws = new WebSocket(`${bound.service.url.replace('http', 'ws')}/v1/stream?from_index=0&access_token=${A}`)
      const agents: string[] = []
      ws.on('message', (data) => {
        const message = JSON.parse(String(data)) as {type: string; event?: {agent_id: string}}
        if (message.type === 'event') agents.push(message.event!.agent_id)
      })
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject))
      const replayed = await countOf(bound, 'agent-a')
      const last = `last-${randomUUID()}`
      await bound.call(ALL, 'POST', '/v1/events', makeEvent({agent_id: 'agent-b'}))
      await bound.call(ALL, 'POST', '/v1/events', makeEvent({agent_id: 'agent-a', action_name: last}))
      const deadline = Date.now() + 10_000
      while (agents.length < replayed + 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
      ws.close()
      expect(agents).to.have.length(replayed + 1)
      expect([...new Set(agents)]).to.deep.equal(['agent-a'])
    })

    it('hides the held calls of other agents and refuses to hold one for them', async () => {
      const theirs = await bound.call(ALL, 'POST', '/v1/approvals', heldCall('agent-b'))
      expect(theirs.status).to.equal(201)
      const mine = await bound.call(A, 'POST', '/v1/approvals', heldCall('agent-a'))
      expect(mine.status).to.equal(201)
      expect((await bound.call(A, 'POST', '/v1/approvals', heldCall('agent-b'))).status).to.equal(403)
      const listed = (await bound.call(A, 'GET', '/v1/approvals')).body as Array<{id: string; agent_id: string}>
      expect(listed.map((approval) => approval.id)).to.deep.equal([mine.body.id])
      expect((await bound.call(A, 'GET', `/v1/approvals/${theirs.body.id}`)).status).to.equal(404)
      const decision = await bound.call(A, 'POST', `/v1/approvals/${theirs.body.id}`, {decision: 'approve'})
      expect(decision.status).to.equal(404)
      expect((await bound.call(ALL, 'GET', `/v1/approvals/${theirs.body.id}`)).body.state).to.equal('pending')
    })

    it('erases its agents’ events only: another agent’s id is not found, a filter stays inside', async () => {
      const [theirs] = bound.ids['agent-b']!
      const listed = await bound.call(A, 'POST', '/v1/erasures', {ids: [theirs], reason: 'test'})
      expect(listed.status).to.equal(200)
      expect(listed.body.skipped).to.deep.equal([{id: theirs, reason: 'not_found'}])
      const selected = await bound.call(A, 'POST', '/v1/erasures', {filter: {action_type: 'LLM_CALL'}, reason: 'test'})
      expect(selected.status).to.equal(201)
      expect(selected.body.erased_events).to.equal(1)
      const [, mine] = bound.ids['agent-a']!
      expect((await bound.call(ALL, 'GET', `/v1/events/${mine}`)).body.input).to.equal(undefined)
      for (const id of bound.ids['agent-b']!)
        expect((await bound.call(ALL, 'GET', `/v1/events/${id}`)).body.input).to.be.an('object')
    })

    it('refuses to register or revoke another agent’s key', async () => {
      const kid = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs'
      expect((await bound.call(A, 'PUT', `/v1/agents/agent-b/keys/${kid}`, {})).status).to.equal(403)
      expect((await bound.call(A, 'DELETE', `/v1/agents/agent-b/keys/${kid}`)).status).to.equal(403)
    })

    it('registers a signed statement of its agents only (SCITT)', async () => {
      const post = (key: string, statement: Uint8Array) =>
        fetch(`${bound.service.url}/entries`, {
          method: 'POST',
          body: statement as BodyInit,
          headers: {'content-type': 'application/cose', authorization: `Bearer ${key}`},
        })
      const signers = {'team-a-signer': testAgentKey(), 'team-b-signer': testAgentKey()}
      for (const [agent, key] of Object.entries(signers))
        expect((await bound.call(ALL, 'PUT', `/v1/agents/${agent}/keys/${key.kid}`, key.jwk)).status).to.equal(201)
      const theirs = await post(TEAM, signedStatement(signers['team-b-signer'], {iss: 'team-b-signer'}))
      expect(theirs.status).to.equal(403)
      expect(Buffer.from(await theirs.arrayBuffer()).toString('latin1')).to.include('team-b-signer')
      expect(await countOf(bound, 'team-b-signer')).to.equal(0)
      const mine = await post(TEAM, signedStatement(signers['team-a-signer'], {iss: 'team-a-signer'}))
      expect(mine.status).to.equal(201)
    })

    it('shows forwarding positions to a bound key, without the filter and error texts', async () => {
      const deadline = Date.now() + 10_000
      let whole = (await bound.call(ALL, 'GET', '/v1/forwarding')).body.destinations[0]
      while (whole.last_error === null && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50))
        whole = (await bound.call(ALL, 'GET', '/v1/forwarding')).body.destinations[0]
      }
      expect(whole.filter).to.include('agent-b')
      const seen = (await bound.call(A, 'GET', '/v1/forwarding')).body.destinations[0]
      expect(seen.filter).not.to.include('agent-b')
      expect(seen.last_error.message).not.to.equal(whole.last_error.message)
      expect(seen.last_error.at).to.be.a('string')
      expect(seen.position).to.be.a('number')
    })
  }))
