import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import * as path from 'node:path'
import type {AgentSummary, StoredEvent} from '../../src/core/types.js'
import {openSqlJsStore, type SqlJsStore} from '../../src/store/index.js'
import {EventMaker, removeDir, tempDir} from './support.js'

/** GET /v1/agents computed the obvious way. */
function referenceSummaries(events: StoredEvent[]): AgentSummary[] {
  const byAgent = new Map<string, StoredEvent[]>()
  for (const e of events) byAgent.set(e.agent_id, [...(byAgent.get(e.agent_id) ?? []), e])
  return [...byAgent.keys()].sort().map((agentId) => {
    const own = byAgent.get(agentId)!
    const times = own.map((e) => e.timestamp).sort()
    const head = own.reduce((a, b) => (b.sequence > a.sequence ? b : a))
    return {
      agent_id: agentId,
      event_count: own.length,
      first_activity: times[0]!,
      last_activity: times.at(-1)!,
      last_sequence: head.sequence,
      head_hash: head.hash,
    }
  })
}

function countBy(events: StoredEvent[], key: (e: StoredEvent) => string): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const e of events) counts[key(e)] = (counts[key(e)] ?? 0) + 1
  return counts
}

describe('store agents and stats', () => {
  let dir: string
  let store: SqlJsStore
  const maker = new EventMaker()
  const at = (hour: number) => new Date(Date.UTC(2026, 5, 1, hour)).toISOString()
  // Timestamps out of order per agent, so first/last activity are real min/max.
  const first = maker.many(40, (i) => ({
    agent_id: `agent-${i % 5}`,
    action_type: i % 4 === 0 ? 'LLM_CALL' : 'TOOL_CALL',
    action_status: ['success', 'failure', 'error'][i % 3]!,
    timestamp: at((i * 13) % 24),
    recorded_at: at(i % 10),
  }))
  const second = maker.many(25, (i) => ({
    agent_id: `agent-${i % 7}`,
    action_type: 'DECISION',
    recorded_at: at(20 + (i % 4)),
    timestamp: at(i),
  }))

  before(async () => {
    dir = tempDir()
    store = await openSqlJsStore({dataDir: dir})
  })

  after(async () => {
    await store.close()
    removeDir(dir)
  })

  // Each test brings the store to the state it needs, so that any one of them runs alone (mocha -g).
  let appended = 0
  async function load(upTo: 'first' | 'all'): Promise<void> {
    if (appended === 0) await store.appendEvents(first)
    if (upTo === 'all' && appended < 2) await store.appendEvents(second)
    appended = Math.max(appended, upTo === 'all' ? 2 : 1)
  }

  it('gives agent heads (the highest sequence of each agent, ordered by agent_id)', async () => {
    await load('first')
    const heads = referenceSummaries(first).map(({agent_id, last_sequence, head_hash}) => ({
      agent_id,
      last_sequence,
      head_hash,
    }))
    expect(await store.agentHeads()).to.deep.equal(heads)
  })

  it('summarises agents and keeps them up to date on each append', async () => {
    await load('first')
    expect(await store.agentSummaries()).to.deep.equal(referenceSummaries(first))
    await load('all')
    const all = [...first, ...second]
    expect(await store.agentSummaries()).to.deep.equal(referenceSummaries(all))
    expect((await store.agentHeads()).map((h) => h.agent_id)).to.deep.equal([
      'agent-0',
      'agent-1',
      'agent-2',
      'agent-3',
      'agent-4',
      'agent-5',
      'agent-6',
    ])
  })

  it('counts totals, recent events (recorded_at >= since) and active agents', async () => {
    await load('all')
    const all = [...first, ...second]
    const since = at(9)
    const recent = all.filter((e) => e.recorded_at >= since)
    const {storage, ...stats} = await store.stats(since)
    expect(storage).to.include({backend: 'embedded', state: 'ok'})
    expect(stats).to.deep.equal({
      total_events: 65,
      events_last_24h: recent.length,
      active_agents: new Set(recent.map((e) => e.agent_id)).size,
      total_agents: 7,
      by_action_type: countBy(all, (e) => e.action_type),
      by_action_status: countBy(all, (e) => e.action_status),
    })
    expect(stats.events_last_24h).to.equal(4 + 25)
    expect(stats.active_agents).to.equal(7)
  })

  it('gives the same answers after a reopen', async () => {
    await load('all')
    const before = {summaries: await store.agentSummaries(), stats: await store.stats(at(9))}
    await store.close()
    store = await openSqlJsStore({dataDir: dir})
    expect(await store.agentSummaries()).to.deep.equal(before.summaries)
    expect(await store.stats(at(9))).to.deep.equal(before.stats)
  })

  it('rebuilds the aggregate tables from the events when a file has none', async () => {
    await load('all')
    const before = {summaries: await store.agentSummaries(), stats: await store.stats(at(9))}
    await store.close()
    const cli = spawnSync(
      'sqlite3',
      [path.join(dir, 'events.sqlite'), 'DELETE FROM agents; DELETE FROM action_counts;'],
      {encoding: 'utf8'},
    )
    expect(cli.status).to.equal(0)
    store = await openSqlJsStore({dataDir: dir})
    expect(await store.agentSummaries()).to.deep.equal(before.summaries)
    expect(await store.stats(at(9))).to.deep.equal(before.stats)
    expect(await store.agentSummaries()).to.deep.equal(referenceSummaries([...first, ...second]))
  })

  it('recounts action counts that no longer add up to the events (edited), leaves the agents table alone', async () => {
    await load('all')
    const before = await store.stats(at(9))
    for (const sql of [
      'DELETE FROM action_counts',
      "UPDATE action_counts SET count = count + 5 WHERE field = 'action_type'",
      "INSERT INTO action_counts VALUES ('action_status', 'invented', 3)",
      "DELETE FROM action_counts WHERE field = 'action_status'",
    ]) {
      await store.close()
      const cli = spawnSync(
        'sqlite3',
        [path.join(dir, 'events.sqlite'), `${sql}; UPDATE agents SET event_count = 99`],
        {encoding: 'utf8'},
      )
      expect(cli.status, cli.stderr).to.equal(0)
      store = await openSqlJsStore({dataDir: dir})
      const stats = await store.stats(at(9))
      expect(stats.by_action_type, sql).to.deep.equal(before.by_action_type)
      expect(stats.by_action_status, sql).to.deep.equal(before.by_action_status)
      // The agents table holds the recorded heads chain verification compares with: never rebuilt while it has rows.
      expect((await store.agentSummaries()).every((agent) => agent.event_count === 99)).to.equal(true)
    }
  })

  it('is empty for an empty store', async () => {
    const emptyDir = tempDir()
    const empty = await openSqlJsStore({dataDir: emptyDir})
    try {
      expect(await empty.agentSummaries()).to.deep.equal([])
      expect(await empty.agentHeads()).to.deep.equal([])
      const {storage, ...stats} = await empty.stats(at(0))
      expect(storage?.used_bytes).to.be.greaterThan(0)
      expect(stats).to.deep.equal({
        total_events: 0,
        events_last_24h: 0,
        active_agents: 0,
        total_agents: 0,
        by_action_type: {},
        by_action_status: {},
      })
    } finally {
      await empty.close()
      removeDir(emptyDir)
    }
  })
})
