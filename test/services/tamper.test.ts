/**
 * Tampering with the data directory while the service is stopped (issue 4, issue 10's tamper
 * matrix): each modification an attacker with write access could make is detected, with the
 * right reason, by verification and by the latest timestamp. Untouched data always verifies.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {readdir, rm} from 'node:fs/promises'
import path from 'node:path'
import type {AuditError} from '../../src/core/errors.js'
import {computeEventHash} from '../../src/core/event/index.js'
import {digestsOfHex} from '../../src/store/digests.js'
import {REBUILD_AGGREGATES} from '../../src/store/sqljs/aggregates.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {makeEvent} from '../support/harness.js'
import {useStore} from '../support/stores.js'

/** 12 events alternating between agents a and b (index i -> agent a when even), then a timestamp. */
async function seed(dataDir: string): Promise<void> {
  const services = await openAudit({dataDir})
  await services.ingest.recordBatch(
    Array.from({length: 12}, (_, i) => makeEvent({agent_id: i % 2 ? 'b' : 'a', action_name: `step-${i}`, input: {i}})),
  )
  await services.timestamps.issue()
  await services.close()
}

/** The attacker edits events.sqlite with the sqlite3 CLI and removes the journal that could restore it. */
async function tamper(dataDir: string, sql: string): Promise<void> {
  for (const file of await readdir(dataDir)) if (file.startsWith('journal')) await rm(path.join(dataDir, file))
  execFileSync('sqlite3', [path.join(dataDir, 'events.sqlite'), sql])
}

function sqlRow(dataDir: string, where: string): Record<string, unknown> {
  // Hashes are stored as BLOBs and times as milliseconds: the careful attacker reads them as the
  // service does, as hex and as ISO 8601 text.
  const asText = (column: string) => `CASE typeof(${column}) WHEN 'blob' THEN lower(hex(${column})) ELSE ${column} END`
  const asTime = (column: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${column} / 1000.0, 'unixepoch')`
  // Salts and commitments are BLOBs of their binary form (src/store/digests.ts), read as the service does.
  const sql = `select *, ${asText('prev_hash')} as prev_hash_text, ${asText('hash')} as hash_text,
    ${asTime('timestamp')} as timestamp_text, ${asTime('recorded_at')} as recorded_at_text,
    ${asText('salts')} as salts_text, ${asText('commitments')} as commitments_text from events where ${where}`
  const {prev_hash_text, hash_text, timestamp_text, recorded_at_text, salts_text, commitments_text, ...row} =
    JSON.parse(execFileSync('sqlite3', ['-json', path.join(dataDir, 'events.sqlite'), sql]).toString())[0]
  const digests = (text: string | null) => (text === null ? null : (digestsOfHex(text) ?? JSON.parse(text)))
  return {
    ...row,
    prev_hash: prev_hash_text,
    hash: hash_text,
    timestamp: timestamp_text,
    recorded_at: recorded_at_text,
    salts: digests(salts_text),
    commitments: digests(commitments_text),
  }
}

/** Recomputes the hash of a row edited by the attacker, as a careful attacker would. */
function rehash(dataDir: string, index: number): string {
  const row = sqlRow(dataDir, `"index" = ${index}`)
  const event: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(row)) {
    if (value === null || key === 'hash' || key === 'index') continue
    const json = ['labels', 'input', 'output', 'metadata', 'erased'].includes(key)
    event[key] = json ? JSON.parse(value as string) : value
  }
  return computeEventHash(event as never)
}

/** The columns of the forged rows below, named: a file's column order is its creator's. */
const FORGED_COLUMNS = `(id, "index", agent_id, sequence, prev_hash, hash, action_type, action_name, action_status,
  timestamp, recorded_at, labels, session_id, trace_id, span_id, parent_id, input, output, metadata, error,
  duration_ms, signature, salts, commitments, erased)`

describe("tampering with a stopped service's data directory", function () {
  this.timeout(60_000)
  let services: AuditServices | undefined
  const {dataDir} = useStore('sqljs', async () => {
    await services?.close()
    services = undefined
  })
  beforeEach(() => seed(dataDir))

  async function reopen() {
    services = await openAudit({dataDir})
    const all = await services.integrity.verifyAll()
    const timestamp = await services.timestamps.verifyLatest()
    const agents = await services.query.agents()
    const stats = await services.query.stats()
    return {all, timestamp, agents, stats}
  }

  it('untouched data verifies everywhere', async () => {
    const {all, timestamp, stats} = await reopen()
    expect(all).to.include({valid: true, agents_checked: 2, events_checked: 12})
    expect(timestamp).to.include({valid: true, current_root_matches: true, consistent: true, error: ''})
    expect(stats.chain_health).to.equal(1)
  })

  it('a changed field: hash_mismatch, chain_valid false, chain_health drops, timestamp inconsistent', async () => {
    await tamper(dataDir, `update events set action_name = 'innocent' where "index" = 4`)
    const {all, timestamp, agents, stats} = await reopen()
    expect(all.valid).to.equal(false)
    expect(all.invalid_agents).to.have.length(1)
    expect(all.invalid_agents[0]).to.include({agent_id: 'a', first_invalid_sequence: 3, reason: 'hash_mismatch'})
    expect(agents.find((a) => a.agent_id === 'a')!.chain_valid).to.equal(false)
    expect(agents.find((a) => a.agent_id === 'b')!.chain_valid).to.equal(true)
    expect(stats.chain_health).to.equal(0.5)
    expect(timestamp).to.include({valid: true, consistent: false})
    const one = await services!.integrity.verifyAgent('a')
    expect(one).to.include({valid: false, reason: 'hash_mismatch', first_invalid_sequence: 3})
  })

  for (const [what, value] of [
    ['a time edited as text', `'2020-01-01'`],
    ['a time edited as a number of another type', '1.5'],
    ["a time edited as an integer outside SQLite's dates", '9000000000000000'],
    ['a time edited as an integer of another millisecond', 'timestamp + 1'],
    ['a time edited as a BLOB', `x'00'`],
  ]) {
    it(`${what}: hash_mismatch, read back as stored, no failure`, async () => {
      await tamper(dataDir, `update events set timestamp = ${value} where "index" = 4`)
      const {all, agents, stats} = await reopen()
      expect(all.invalid_agents).to.have.length(1)
      expect(all.invalid_agents[0]).to.include({agent_id: 'a', first_invalid_sequence: 3, reason: 'hash_mismatch'})
      expect(agents.find((a) => a.agent_id === 'a')!.chain_valid).to.equal(false)
      expect(stats.chain_health).to.equal(0.5)
      const page = await services!.store.queryEvents({}, {limit: 20, offset: 0})
      expect(page.items).to.have.length(12)
    })
  }

  it(
    'a time edited into ISO text read back as that text, and ' +
      'recorded_at edited as text: each its own hash_mismatch',
    async () => {
      await tamper(
        dataDir,
        `update events set timestamp = '2020-01-01T00:00:00.000Z' where "index" = 4;
      update events set recorded_at = 'yesterday' where "index" = 7`,
      )
      const {all} = await reopen()
      expect(all.invalid_agents.map((a) => [a.agent_id, a.first_invalid_sequence, a.reason])).to.deep.equal([
        ['a', 3, 'hash_mismatch'],
        ['b', 4, 'hash_mismatch'],
      ])
      const [event] = (await services!.store.queryEvents({agent_id: 'a'}, {limit: 1, offset: 2})).items
      expect(event?.timestamp).to.equal('2020-01-01T00:00:00.000Z')
    },
  )

  it('a payload value edited: commitment_mismatch naming the member, though the hash still matches', async () => {
    await tamper(dataDir, `update events set input = '{"i":99}' where "index" = 4`)
    const {all, timestamp, agents} = await reopen()
    expect(all.invalid_agents[0]).to.include({agent_id: 'a', first_invalid_sequence: 3, reason: 'commitment_mismatch'})
    expect(all.invalid_agents[0]!.expected).to.match(/^input: [0-9a-f]{64}$/)
    expect(agents.find((a) => a.agent_id === 'a')!.chain_valid).to.equal(false)
    // The stored hash still matches, but the tree recomputed from content counts a payload that
    // contradicts its commitment as changed content, so the timestamp no longer covers it.
    expect(timestamp).to.include({valid: true, consistent: false})
  })

  it('a payload value beyond double range: commitment_mismatch, no failure', async () => {
    await tamper(dataDir, `update events set input = '{"n":1e999}' where "index" = 4`)
    const {all, agents, stats} = await reopen()
    expect(all.invalid_agents[0]).to.include({agent_id: 'a', first_invalid_sequence: 3, reason: 'commitment_mismatch'})
    expect(all.invalid_agents[0]!.actual).to.match(/^unhashable value: /)
    expect(agents.find((a) => a.agent_id === 'a')!.chain_valid).to.equal(false)
    expect(stats.chain_health).to.equal(0.5)
  })

  it('a changed field with its hash recomputed: broken_link at the next event', async () => {
    await tamper(dataDir, `update events set action_name = 'innocent' where "index" = 4`)
    await tamper(dataDir, `update events set hash = '${rehash(dataDir, 4)}' where "index" = 4`)
    const {all, timestamp} = await reopen()
    expect(all.invalid_agents[0]).to.include({agent_id: 'a', first_invalid_sequence: 4, reason: 'broken_link'})
    expect(timestamp.consistent).to.equal(false)
  })

  it('the last event of an agent changed and rehashed: hash_mismatch against the recorded head', async () => {
    await tamper(dataDir, `update events set action_name = 'innocent' where "index" = 11`)
    const forged = rehash(dataDir, 11)
    const genuine = sqlRow(dataDir, '"index" = 11').hash
    await tamper(dataDir, `update events set hash = '${forged}' where "index" = 11`)
    const {all, timestamp, agents, stats} = await reopen()
    expect(all.invalid_agents).to.deep.equal([
      {
        valid: false,
        agent_id: 'b',
        events_checked: 6,
        first_invalid_sequence: 6,
        first_invalid_event_id: sqlRow(dataDir, '"index" = 11').id,
        reason: 'hash_mismatch',
        expected: genuine,
        actual: forged,
      },
    ])
    expect(agents.find((a) => a.agent_id === 'b')!.chain_valid).to.equal(false)
    expect(stats.chain_health).to.equal(0.5)
    expect(timestamp).to.include({valid: true, current_root_matches: false, consistent: false})
  })

  it('... and the recorded heads rewritten to match: the chain alone cannot tell, the timestamp does', async () => {
    await tamper(dataDir, `update events set action_name = 'innocent' where "index" = 11`)
    await tamper(dataDir, `update events set hash = '${rehash(dataDir, 11)}' where "index" = 11; ${REBUILD_AGGREGATES}`)
    const {all, timestamp} = await reopen()
    expect(all.valid).to.equal(true)
    expect(timestamp).to.include({valid: true, current_root_matches: false, consistent: false})
  })

  it(
    "an agent's newest event removed from the middle of " + 'the log: short of its recorded head, and an index gap',
    async () => {
      // Index 10 is agent a's sequence 6, its last; index 11 (b) follows it.
      await tamper(dataDir, `delete from events where "index" = 10`)
      const {all, timestamp, agents, stats} = await reopen()
      expect(all.valid).to.equal(false)
      expect(all.invalid_agents).to.deep.equal([
        {
          valid: false,
          agent_id: 'a',
          events_checked: 5,
          first_invalid_sequence: 6,
          first_invalid_event_id: null,
          reason: 'sequence_gap',
          expected: '6',
          actual: '5',
        },
      ])
      expect(all.index_gap).to.deep.equal({
        expected_index: 10,
        actual_index: 11,
        event_id: sqlRow(dataDir, '"index" = 11').id,
      })
      expect(agents.find((a) => a.agent_id === 'a')!.chain_valid).to.equal(false)
      expect(stats.chain_health).to.equal(0.5)
      expect(await services!.integrity.verifyAgent('a')).to.include({
        valid: false,
        reason: 'sequence_gap',
        first_invalid_sequence: 6,
      })
      expect(timestamp.consistent).to.equal(false)
      // Such a store takes nothing more: the next index would not be the next Merkle leaf.
      const error = await services!.ingest.recordOne(makeEvent()).then(
        () => undefined,
        (e: AuditError) => e,
      )
      expect(error).to.include({code: 'storage_unavailable', status: 503})
      expect(error!.message).to.match(
        new RegExp(
          String.raw`^nothing was recorded: events\.sqlite holds 11 events under indexes up to 11, ` +
            'so events were removed or renumbered',
        ),
      )
      expect((await services!.query.stats()).total_events).to.equal(11)
    },
  )

  it('... and the recorded heads rewritten to match: the index gap remains', async () => {
    await tamper(dataDir, `delete from events where "index" = 10; ${REBUILD_AGGREGATES}`)
    const {all} = await reopen()
    expect(all).to.deep.include({valid: false, invalid_agents: []})
    expect(all.index_gap).to.include({expected_index: 10, actual_index: 11})
  })

  it('an event renumbered: an index gap', async () => {
    await tamper(dataDir, `update events set "index" = 40 where "index" = 11`)
    const {all} = await reopen()
    expect(all.valid).to.equal(false)
    expect(all.index_gap).to.include({expected_index: 11, actual_index: 40})
  })

  it('every event of an agent removed: the agent fails with no events checked', async () => {
    await tamper(dataDir, `delete from events where agent_id = 'b'`)
    const {all, agents} = await reopen()
    expect(all.invalid_agents).to.deep.equal([
      {
        valid: false,
        agent_id: 'b',
        events_checked: 0,
        first_invalid_sequence: 1,
        first_invalid_event_id: null,
        reason: 'sequence_gap',
        expected: '6',
        actual: '0',
      },
    ])
    expect(agents.find((a) => a.agent_id === 'b')!.chain_valid).to.equal(false)
    expect(await services!.integrity.verifyAgent('b')).to.include({valid: false, events_checked: 0})
  })

  it('a deleted event: sequence_gap', async () => {
    await tamper(dataDir, `delete from events where "index" = 5`)
    const {all, timestamp} = await reopen()
    expect(all.invalid_agents[0]).to.include({
      agent_id: 'b',
      first_invalid_sequence: 4,
      reason: 'sequence_gap',
      expected: '3',
      actual: '4',
    })
    expect(timestamp.consistent).to.equal(false)
  })

  it('two events of an agent reordered: sequence_gap', async () => {
    await tamper(
      dataDir,
      `update events set "index" = -1 where "index" = 2; update events set "index" = 2 where "index" = 6; update ` +
        `events set "index" = 6 where "index" = -1`,
    )
    const {all, timestamp} = await reopen()
    expect(all.invalid_agents[0]).to.include({agent_id: 'a', reason: 'sequence_gap', first_invalid_sequence: 4})
    expect(timestamp.consistent).to.equal(false)
  })

  it('a wrong genesis: bad_genesis', async () => {
    await tamper(dataDir, `update events set prev_hash = '${'1'.repeat(64)}' where "index" = 1`)
    const {all} = await reopen()
    expect(all.invalid_agents[0]).to.include({agent_id: 'b', reason: 'bad_genesis', first_invalid_sequence: 1})
  })

  it('a truncated tail: the chains stop short of their recorded heads', async () => {
    await tamper(dataDir, `delete from events where "index" >= 9`)
    const {all, timestamp} = await reopen()
    expect(all.invalid_agents.map((a) => [a.agent_id, a.reason, a.first_invalid_sequence])).to.deep.equal([
      ['a', 'sequence_gap', 6],
      ['b', 'sequence_gap', 5],
    ])
    expect(all.index_gap).to.equal(undefined)
    expect(timestamp).to.include({valid: true, tree_size: 12, consistent: false, current_root_matches: false})
    // The indexes still run 0..8, but an append would follow heads the chains no longer reach.
    const refused = await services!.ingest.recordOne(makeEvent({agent_id: 'a'})).then(
      () => undefined,
      (e: AuditError) => e,
    )
    expect(refused).to.include({code: 'storage_unavailable', status: 503})
    expect(refused!.message).to.equal(
      'nothing was recorded: events.sqlite holds 9 events where the chain heads the service recorded account for ' +
        '12, so events were added or removed outside the service (audit-trail verify shows where)',
    )
    expect(await services!.store.count()).to.equal(9)
  })

  it(
    'a truncated tail with the recorded heads rewritten: chains still link, but the timestamped tree is no longer a ' +
      'prefix',
    async () => {
      await tamper(dataDir, `delete from events where "index" >= 9; ${REBUILD_AGGREGATES}`)
      const {all, timestamp, stats} = await reopen()
      expect(all.valid).to.equal(true)
      expect(stats.total_events).to.equal(9)
      expect(timestamp).to.include({valid: true, tree_size: 12, consistent: false, current_root_matches: false})
    },
  )

  it('the stored time of the latest timestamp changed: the token says otherwise', async () => {
    await tamper(dataDir, `update timestamps set timestamp = '2020-01-01T00:00:00.000Z'`)
    const {timestamp} = await reopen()
    expect(timestamp.valid).to.equal(false)
    expect(timestamp.error).to.match(
      /^the stored time "2020-01-01T00:00:00.000Z" differs from the one signed in the token/,
    )
    expect(timestamp.tsa_time).not.to.equal('2020-01-01T00:00:00.000Z')
  })

  it('the stored signer of the latest timestamp changed: the token names another', async () => {
    await tamper(dataDir, `update timestamps set tsa = 'Evil TSA'`)
    const {timestamp} = await reopen()
    expect(timestamp.valid).to.equal(false)
    expect(timestamp.error).to.match(/^the stored signer "Evil TSA" differs from the one signed in the token/)
  })

  it(
    "an event added after an agent's newest, well formed (linked, hashed): past its recorded head, and nothing " +
      'more recorded for it',
    async () => {
      // Agent a's last event is index 10 (sequence 6). The forgery follows it as index 12, sequence 7.
      const head = sqlRow(dataDir, '"index" = 10')
      const forgedId = '0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8aaa'
      await tamper(
        dataDir,
        `insert into events ${FORGED_COLUMNS} select '${forgedId}', 12, agent_id, 7, '${head.hash}',
      'x', action_type, 'forged', action_status,
      timestamp, recorded_at, labels, session_id, trace_id, span_id, parent_id, input, output, metadata, error,
      duration_ms, signature, salts, commitments, erased from events where "index" = 10`,
      )
      await tamper(dataDir, `update events set hash = '${rehash(dataDir, 12)}' where "index" = 12`)
      const {all, timestamp, agents, stats} = await reopen()
      expect(all.invalid_agents).to.deep.equal([
        {
          valid: false,
          agent_id: 'a',
          events_checked: 7,
          first_invalid_sequence: 7,
          first_invalid_event_id: forgedId,
          reason: 'sequence_gap',
          expected: '6',
          actual: '7',
        },
      ])
      expect((await services!.integrity.verifyAgent('a')).valid).to.equal(false)
      expect(agents.find((a) => a.agent_id === 'a')!.chain_valid).to.equal(false)
      expect(stats.chain_health).to.equal(0.5)
      // The timestamped tree (12 events) is still a prefix: the forgery came after it.
      expect(timestamp).to.include({valid: true, consistent: true})
      const refused = await services!.ingest.recordOne(makeEvent({agent_id: 'a'})).then(
        () => undefined,
        (e: AuditError) => e,
      )
      expect(refused).to.include({code: 'storage_unavailable', status: 503})
      expect(refused!.message).to.match(
        new RegExp(
          String.raw`^nothing was recorded: events\.sqlite holds 13 events where the chain heads ` +
            'the service recorded account for 12',
        ),
      )
      expect(await services!.store.count()).to.equal(13)
    },
  )

  it(
    "an agent's newest event replaced by a forged one of another agent (every count still adds up): appends for it " +
      'are refused',
    async () => {
      // Index 11 (b's sequence 6) becomes a's sequence 7; the log still holds 12 events under 0..11.
      const head = sqlRow(dataDir, '"index" = 10')
      await tamper(
        dataDir,
        `delete from events where "index" = 11;
      insert into events ${FORGED_COLUMNS}
      select '0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8aac', 11, agent_id, 7, '${head.hash}', 'x',
      action_type, 'forged', action_status, timestamp, recorded_at, labels, session_id, trace_id,
      span_id, parent_id, input, output, metadata, error, duration_ms, signature, salts, commitments, erased
      from events where "index" = 10`,
      )
      await tamper(dataDir, `update events set hash = '${rehash(dataDir, 11)}' where "index" = 11`)
      const {all} = await reopen()
      expect(
        all.invalid_agents.map((agent) => [agent.agent_id, agent.reason, agent.first_invalid_sequence]),
      ).to.deep.equal([
        ['a', 'sequence_gap', 7],
        ['b', 'sequence_gap', 6],
      ])
      const refused = await services!.ingest.recordOne(makeEvent({agent_id: 'a'})).then(
        () => undefined,
        (e: AuditError) => e,
      )
      expect(refused).to.include({code: 'storage_unavailable', status: 503})
      expect(refused!.message).to.match(
        /^nothing was recorded: events\.sqlite already holds an event with the agent and sequence/,
      )
      expect(await services!.store.count()).to.equal(12)
    },
  )

  it('an event added under a negative index: an index gap, and the chain it joins fails', async () => {
    const head = sqlRow(dataDir, '"index" = 10')
    await tamper(
      dataDir,
      `insert into events ${FORGED_COLUMNS}
      select '0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8aab', -1, agent_id, 7, '${head.hash}',
      'x', action_type, 'forged', action_status,
      timestamp, recorded_at, labels, session_id, trace_id, span_id, parent_id, input, output, metadata, error,
      duration_ms, signature, salts, commitments, erased from events where "index" = 10`,
    )
    await tamper(dataDir, `update events set hash = '${rehash(dataDir, -1)}' where "index" = -1`)
    const {all, timestamp, agents, stats} = await reopen()
    expect(all).to.deep.include({
      valid: false,
      index_gap: {expected_index: 0, actual_index: -1, event_id: '0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8aab'},
    })
    expect(all.invalid_agents.map((agent) => agent.agent_id)).to.deep.equal(['a'])
    expect((await services!.integrity.verifyAgent('a')).valid).to.equal(false)
    expect(agents.find((a) => a.agent_id === 'a')!.chain_valid).to.equal(false)
    expect(stats.chain_health).to.equal(0.5)
    expect(timestamp.consistent).to.equal(false)
  })

  it("an agent's recorded head deleted: its events are ones the service never recorded", async () => {
    await tamper(dataDir, `delete from agents where agent_id = 'b'`)
    const {all, stats} = await reopen()
    expect(all.invalid_agents).to.deep.equal([
      {
        valid: false,
        agent_id: 'b',
        events_checked: 6,
        first_invalid_sequence: 1,
        first_invalid_event_id: sqlRow(dataDir, '"index" = 1').id,
        reason: 'sequence_gap',
        expected: '0',
        actual: '6',
      },
    ])
    expect(stats.chain_health).to.equal(0.5)
  })

  it('only the stored hash of a covered event changed: hash_mismatch, the timestamp no longer consistent', async () => {
    await tamper(dataDir, `update events set hash = '${'ab'.repeat(32)}' where "index" = 5`)
    const {all, timestamp, stats} = await reopen()
    expect(all.invalid_agents[0]).to.include({agent_id: 'b', first_invalid_sequence: 3, reason: 'hash_mismatch'})
    expect(stats.chain_health).to.equal(0.5)
    expect(timestamp).to.include({valid: true, current_root_matches: false, consistent: false})
  })

  it('keeps the timestamp consistent after honest growth', async () => {
    services = await openAudit({dataDir})
    await services.ingest.recordOne(makeEvent())
    const timestamp = await services.timestamps.verifyLatest()
    expect(timestamp).to.include({valid: true, current_root_matches: false, consistent: true})
  })
})
