/**
 * Keys bound to agents on every read surface (docs/security.md, "Keys bound to agents"): a key
 * bound by name or by pattern sees its agents' events, counts and ids only, on both stores; an
 * unbound key still sees everything, and tree-level reads stay open.
 */
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {runCli} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {forEachStore} from '../support/stores.js'
import {A, AGENTS, ALL, ODD, TEAM, idsOf, startBoundService, type BoundService} from './agent-binding-fixture.js'

const EVERYONE = [...AGENTS.a, ...AGENTS.team, ...AGENTS.odd, ...AGENTS.others]
const CASES = [
  {name: 'a key bound to agent-a', key: A, agents: AGENTS.a, patterns: ['agent-a']},
  {name: 'a key bound to team-a-*', key: TEAM, agents: AGENTS.team, patterns: ['team-a-*']},
  {name: 'a key bound to a_b?* (LIKE and GLOB characters)', key: ODD, agents: AGENTS.odd, patterns: ['a_b?*']},
]

const agentsOf = (events: Array<{agent_id: string}>) => [...new Set(events.map((e) => e.agent_id))].sort()

describe('keys bound to agents: reads', () =>
  forEachStore((store) => {
    let bound: BoundService
    before(async () => {
      bound = await startBoundService(store)
    })
    after(async () => bound?.close())

    for (const {name, key, agents, patterns} of CASES) {
      const outside = () =>
        idsOf(
          bound,
          EVERYONE.filter((agent) => !agents.includes(agent)),
        )

      describe(name, () => {
        it('lists, counts and pages only its agents’ events', async () => {
          const all = await bound.call(key, 'GET', '/v1/events?limit=1000')
          expect(all.status).to.equal(200)
          expect(agentsOf(all.body)).to.deep.equal([...agents].sort())
          expect(all.body.map((e: {id: string}) => e.id).sort()).to.deep.equal(idsOf(bound, agents).sort())
          expect(all.headers.get('x-total-count')).to.equal(String(2 * agents.length))
          const page = await bound.call(key, 'GET', '/v1/events?limit=1&offset=1')
          expect(page.body.map((e: {id: string}) => e.id)).to.deep.equal([all.body[1].id])
          expect(page.headers.get('x-total-count')).to.equal(String(2 * agents.length))
          const other = await bound.call(key, 'GET', '/v1/events?agent_id=agent-b')
          expect([other.body, other.headers.get('x-total-count')]).to.deep.equal([[], '0'])
        })

        it('answers 404 for another agent’s event, proof and receipt, as for none', async () => {
          const [theirs] = outside()
          const [own] = idsOf(bound, agents)
          for (const p of [`/v1/events/${theirs}`, `/v1/merkle/proof/${theirs}`, `/v1/events/${theirs}/receipt`]) {
            expect((await bound.call(ALL, 'GET', p)).status, `unbound ${p}`).to.equal(200)
            const refused = await bound.call(key, 'GET', p)
            expect(refused.status, p).to.equal(404)
            expect(refused.text).not.to.include('agent-b')
          }
          expect((await bound.call(key, 'GET', `/v1/events/${own}`)).status).to.equal(200)
          expect((await bound.call(key, 'GET', `/v1/merkle/proof/${own}`)).body.event_id).to.equal(own)
        })

        it('searches its agents only: results and total', async () => {
          const {status, body} = await bound.call(key, 'GET', `/v1/search?q=${bound.marker}&limit=1`)
          expect(status).to.equal(200)
          expect(body.total).to.equal(2 * agents.length)
          expect(agents).to.include(body.results[0].agent_id)
          const every = await bound.call(key, 'GET', `/v1/search?q=${bound.marker}&limit=1000`)
          expect(agentsOf(every.body.results)).to.deep.equal([...agents].sort())
        })

        it('lists its agents, counts their events in stats and verifies their chains only', async () => {
          const listed = await bound.call(key, 'GET', '/v1/agents')
          expect(listed.body.map((a: {agent_id: string}) => a.agent_id)).to.deep.equal([...agents].sort())
          const stats = (await bound.call(key, 'GET', '/v1/stats')).body
          expect(stats).to.include({total_events: 2 * agents.length, total_agents: agents.length})
          expect(stats).to.include({events_last_24h: 2 * agents.length, active_agents: agents.length})
          expect(stats.by_action_type).to.deep.equal({LLM_CALL: agents.length, TOOL_CALL: agents.length})
          // The tree is the trail's: its size counts every event.
          expect(stats.tree_size).to.equal(2 * EVERYONE.length)
          const verify = (await bound.call(key, 'GET', '/v1/verify')).body
          expect(verify).to.include({valid: true, agents_checked: agents.length, events_checked: 2 * agents.length})
          expect((await bound.call(key, 'GET', '/v1/verify?agent_id=agent-b')).status).to.equal(404)
          expect((await bound.call(key, 'GET', `/v1/verify?agent_id=${agents[0]}`)).body.valid).to.equal(true)
        })

        it('runs policies over its agents’ events only', async () => {
          const policies = [{name: 'nothing', type: 'forbidden_action', match: {agent_id: '*'}}]
          const {body} = await bound.call(key, 'POST', '/v1/policy/check', {policies})
          expect(body.events_checked).to.equal(2 * agents.length)
          expect(body.results[0].violation_count).to.equal(2 * agents.length)
          expect(agentsOf(body.results[0].violations)).to.deep.equal([...agents].sort())
        })

        it('exports a package of its agents only, which verifies offline', async () => {
          const {status, text} = await bound.call(key, 'GET', '/v1/export')
          expect(status).to.equal(200)
          const pkg = JSON.parse(text)
          expect(pkg.filters).to.deep.equal({agents: patterns})
          expect(agentsOf(pkg.events)).to.deep.equal([...agents].sort())
          expect(Object.keys(pkg.chains).sort()).to.deep.equal([...agents].sort())
          expect(Object.keys(pkg.proofs)).to.have.length(2 * agents.length)
          const dir = await tempDir()
          try {
            const file = path.join(dir, 'bound.atrail.json')
            await writeFile(file, text)
            const verified = await runCli(['verify', '--package', file])
            expect(verified.code, verified.stdout + verified.stderr).to.equal(0)
            expect(verified.stdout).to.include('whole chain')
          } finally {
            await removeDir(dir)
          }
        })

        it('does not know another agent’s keys', async () => {
          expect((await bound.call(key, 'GET', '/v1/agents/agent-b/keys')).status).to.equal(404)
          expect((await bound.call(key, 'GET', `/v1/agents/${encodeURIComponent(agents[0]!)}/keys`)).status).to.equal(
            200,
          )
        })

        it('reads tree-level answers whole', async () => {
          const root = (await bound.call(key, 'GET', '/v1/merkle/root')).body
          expect(root.tree_size).to.equal(2 * EVERYONE.length)
          expect((await bound.call(key, 'GET', '/v1/merkle/consistency?first=1')).status).to.equal(200)
        })
      })
    }

    it('a bound package that lost an event, or names patterns its events are outside, fails verify', async () => {
      const pkg = JSON.parse((await bound.call(TEAM, 'GET', '/v1/export')).text)
      const dropped = structuredClone(pkg)
      const [first] = dropped.events.splice(0, 1)
      delete dropped.proofs[first.id]
      // The chains entry made to agree: only completeness (each agent's whole chain) can tell.
      const next = dropped.events.find((e: {agent_id: string}) => e.agent_id === first.agent_id)
      Object.assign(dropped.chains[first.agent_id], {first_sequence: next.sequence, anchor_prev_hash: next.prev_hash})
      const narrowed = {...structuredClone(pkg), filters: {agents: ['team-a-x']}}
      const dir = await tempDir()
      try {
        for (const [name, tampered] of Object.entries({dropped, narrowed})) {
          const file = path.join(dir, `${name}.atrail.json`)
          await writeFile(file, JSON.stringify(tampered))
          const verified = await runCli(['verify', '--package', file])
          expect(verified.code, `${name}: ${verified.stdout}`).to.equal(1)
        }
      } finally {
        await removeDir(dir)
      }
    })

    it('an unbound key still reads every agent', async () => {
      const listed = await bound.call(ALL, 'GET', '/v1/events?limit=1000')
      expect(agentsOf(listed.body)).to.deep.equal([...EVERYONE].sort())
      const search = await bound.call(ALL, 'GET', `/v1/search?q=${bound.marker}`)
      expect(search.body.total).to.equal(2 * EVERYONE.length)
      const verify = (await bound.call(ALL, 'GET', '/v1/verify')).body
      expect(verify.agents_checked).to.equal(EVERYONE.length)
      expect(JSON.parse((await bound.call(ALL, 'GET', '/v1/export')).text).filters).to.deep.equal({})
    })
  }))
