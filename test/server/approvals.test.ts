/**
 * The approvals API on both stores (docs/oversight.md): a held call's request, a decision by a
 * named key, the 403/404/409/400 refusals with nothing recorded, the proxy's closes, and the
 * events in the log linked by parent_id.
 */
import {randomUUID} from 'node:crypto'
import {expect} from 'chai'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {decisionEventId} from '../../src/core/approval/index.js'
import {openAudit} from '../../src/services/audit.js'
import {createApp} from '../../src/server/app.js'
import {startTestApi, useTestApi} from '../support/harness.js'
import {createTestDatabase, forEachStore, postgresAvailable} from '../support/stores.js'
import http from 'node:http'
import type {AddressInfo} from 'node:net'

const APPROVER = 'approver-key-0123456789abcdef'
const WRITER = 'writer-key-0123456789abcdef'
const KEYS = parseKeyFile(`${APPROVER} read,approve name=alice\n${WRITER} read,write\n`)

export function heldCall(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agent_id: 'billing-bot',
    action_type: 'TOOL_CALL',
    action_name: 'payments.refund',
    call_event_id: randomUUID(),
    rule: 'hold-payments',
    rule_type: 'forbidden_action',
    input: {amount: 120, currency: 'EUR'},
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    ...overrides,
  }
}

describe('the approvals API', function () {
  this.timeout(60_000)
  forEachStore((store) => {
    const api = useTestApi({store, app: {apiKeys: KEYS}})

    const as = (key: string) => ({headers: {authorization: `Bearer ${key}`}})
    const count = async () => (await api.request('GET', '/v1/merkle/root', as(WRITER))).body.tree_size as number

    async function requested(overrides: Record<string, unknown> = {}) {
      const response = await api.request('POST', '/v1/approvals', {body: heldCall(overrides), ...as(WRITER)})
      expect(response.status, response.text).to.equal(201)
      return response.body
    }

    it('records a held call as pending and a decision by the key named alice', async () => {
      const approval = await requested()
      expect(approval).to.include({state: 'pending', agent_id: 'billing-bot', action_name: 'payments.refund'})
      expect(approval.input).to.deep.equal({amount: 120, currency: 'EUR'})
      const pending = await api.request('GET', '/v1/approvals?state=pending', as(WRITER))
      expect(pending.body.map((a: {id: string}) => a.id)).to.deep.equal([approval.id])

      const decided = await api.request('POST', `/v1/approvals/${approval.id}`, {
        body: {decision: 'approve', reason: 'refund ticket 42'},
        ...as(APPROVER),
      })
      expect(decided.status, decided.text).to.equal(201)
      expect(decided.body.state).to.equal('approved')
      expect(decided.body.decision).to.include({decided_by: 'alice', reason: 'refund ticket 42', outcome: 'approved'})

      const events = (await api.request('GET', '/v1/events?agent_id=audit-trail:approvals', as(WRITER))).body
      expect(events.map((e: {action_type: string}) => e.action_type)).to.deep.equal([
        'APPROVAL_REQUESTED',
        'APPROVAL_GRANTED',
      ])
      expect(events[0]).to.include({id: approval.id, parent_id: approval.call_event_id, trace_id: approval.trace_id})
      expect(events[1]).to.include({id: decisionEventId(approval.id), parent_id: approval.id})
      expect(events[1].labels).to.include({decided_by: 'alice'})
      expect((await api.request('GET', '/v1/approvals?state=pending', as(WRITER))).body).to.deep.equal([])
    })

    it('POST /v1/policy/check reports the held calls with their decisions', async () => {
      const approval = await requested()
      await api.request('POST', `/v1/approvals/${approval.id}`, {body: {decision: 'approve'}, ...as(APPROVER)})
      await api.request('POST', '/v1/events', {
        body: {
          id: approval.call_event_id,
          agent_id: 'billing-bot',
          action_type: 'TOOL_CALL',
          action_name: 'payments.refund',
        },
        ...as(WRITER),
      })
      const rule = {name: 'approved', type: 'require_approval', match: {action_name: 'payments.*'}}
      const report = await api.request('POST', '/v1/policy/check', {
        body: {policies: [rule], scope: {agent_id: 'billing-bot'}},
        ...as(WRITER),
      })
      expect(report.status, report.text).to.equal(200)
      expect(report.body.passed).to.equal(true)
      expect(report.body.approvals).to.have.length(1)
      expect(report.body.approvals[0]).to.include({approval_id: approval.id, state: 'approved', decided_by: 'alice'})
    })

    it('refuses a second decision, a decision without approve, a malformed one and an unknown id', async () => {
      const approval = await requested()
      const before = await count()
      const forbidden = await api.request('POST', `/v1/approvals/${approval.id}`, {
        body: {decision: 'approve'},
        ...as(WRITER),
      })
      expect(forbidden.status).to.equal(403)
      for (const body of [{decision: 'maybe'}, {decision: 'deny', reason: 7}, {decision: 'deny', who: 'x'}, []]) {
        const bad = await api.request('POST', `/v1/approvals/${approval.id}`, {body, ...as(APPROVER)})
        expect(bad.status, JSON.stringify(body)).to.equal(400)
        expect(bad.body.error.code).to.equal('validation_error')
      }
      const unknown = await api.request('POST', `/v1/approvals/${randomUUID()}`, {
        body: {decision: 'deny'},
        ...as(APPROVER),
      })
      expect(unknown.status).to.equal(404)
      expect(await count()).to.equal(before)

      const denied = await api.request('POST', `/v1/approvals/${approval.id}`, {
        body: {decision: 'deny', reason: 'not on a Sunday'},
        ...as(APPROVER),
      })
      expect(denied.body.state).to.equal('denied')
      const again = await api.request('POST', `/v1/approvals/${approval.id}`, {
        body: {decision: 'approve'},
        ...as(APPROVER),
      })
      expect(again.status).to.equal(409)
      expect(again.body.error.message).to.match(/already denied by alice/)
      const closed = await api.request('POST', `/v1/approvals/${approval.id}/close`, {
        body: {outcome: 'timeout'},
        ...as(WRITER),
      })
      expect(closed.status).to.equal(409)
      expect(await count()).to.equal(before + 1)
    })

    it('lets the proxy close an approval with a timeout, but not approve it', async () => {
      const approval = await requested()
      const approve = await api.request('POST', `/v1/approvals/${approval.id}/close`, {
        body: {outcome: 'approved'},
        ...as(WRITER),
      })
      expect(approve.status).to.equal(400)
      const closed = await api.request('POST', `/v1/approvals/${approval.id}/close`, {
        body: {outcome: 'timeout', reason: 'nobody decided within 5m'},
        ...as(WRITER),
      })
      expect(closed.status).to.equal(201)
      expect(closed.body).to.include({state: 'timeout'})
      expect(closed.body.decision).to.include({decided_by: 'mcp-proxy', reason: 'nobody decided within 5m'})
      const event = (await api.request('GET', `/v1/events/${closed.body.decision.event_id}`, as(WRITER))).body
      expect(event).to.include({action_type: 'APPROVAL_DENIED', action_status: 'timeout'})
    })

    it('filters the list by state, agent and time, and refuses unknown filters', async () => {
      const first = await requested({agent_id: 'a-1'})
      await requested({agent_id: 'a-2'})
      await api.request('POST', `/v1/approvals/${first.id}`, {body: {decision: 'deny'}, ...as(APPROVER)})
      const list = async (query: string) => (await api.request('GET', `/v1/approvals?${query}`, as(WRITER))).body
      expect((await list('agent_id=a-2')).map((a: {agent_id: string}) => a.agent_id)).to.deep.equal(['a-2'])
      expect((await list('state=denied')).map((a: {id: string}) => a.id)).to.deep.equal([first.id])
      expect(await list('since=2999-01-01T00:00:00Z')).to.deep.equal([])
      for (const query of ['state=done', 'since=yesterday', 'limit=0', 'colour=red']) {
        const bad = await api.request('GET', `/v1/approvals?${query}`, as(WRITER))
        expect(bad.status, query).to.equal(400)
      }
      expect((await api.request('GET', `/v1/approvals/${first.id}`, as(WRITER))).body.state).to.equal('denied')
      expect((await api.request('GET', `/v1/approvals/${randomUUID()}`, as(WRITER))).status).to.equal(404)
    })
  })

  it('keeps a pending approval across a restart of the service (data directory)', async () => {
    const api = await startTestApi({app: {apiKeys: KEYS}})
    const held = await api.request('POST', '/v1/approvals', {
      body: heldCall(),
      headers: {authorization: `Bearer ${WRITER}`},
    })
    const dataDir = api.dataDir
    await api.services.close()
    const services = await openAudit({dataDir})
    try {
      expect((await services.approvals.get(held.body.id)).state).to.equal('pending')
      const decided = await services.approvals.decide(held.body.id, {decision: 'approve'}, 'bob')
      expect(decided.decision).to.include({decided_by: 'bob'})
    } finally {
      await services.close()
      await api.close().catch(() => undefined)
    }
  })

  it('lets exactly one of two services on one database decide, however they race', async function () {
    if (!(await postgresAvailable())) this.skip()
    const database = await createTestDatabase()
    const opened = await Promise.all([0, 1].map(() => openAudit({dataDir: '/nonexistent', databaseUrl: database.url})))
    const servers = opened.map((services) => http.createServer(createApp(services, {apiKeys: KEYS}).callback()))
    try {
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))))
      const urls = servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`)
      const held = await opened[0]!.approvals.request(heldCall())
      for (let round = 0; round < 5; round++) {
        const approval = round === 0 ? held : await opened[0]!.approvals.request(heldCall())
        const answers = await Promise.all(
          urls.map((url, i) =>
            fetch(`${url}/v1/approvals/${approval.id}`, {
              method: 'POST',
              headers: {authorization: `Bearer ${APPROVER}`, 'content-type': 'application/json'},
              body: JSON.stringify({decision: i === 0 ? 'approve' : 'deny'}),
            }).then((r) => r.status),
          ),
        )
        expect(answers.sort()).to.deep.equal([201, 409])
      }
      const decisions = opened[1]!.store.scanEvents({filter: {agent_id: 'audit-trail:approvals'}})
      let count = 0
      for await (const event of decisions) if (event.action_type !== 'APPROVAL_REQUESTED') count++
      expect(count).to.equal(5)
    } finally {
      for (const server of servers) server.close()
      for (const services of opened) await services.close()
      await database.drop()
    }
  })
})
