/**
 * The sql.js store's database with the counts that move with every insert, and the inserts
 * themselves: appends and journal replay write rows through here alike.
 */
import {AuditError} from '../../core/errors.js'
import type {AgentHead, CheckpointRecord, StoredEvent, TimestampRecord} from '../../core/types.js'
import {aggregateRows} from '../aggregates.js'
import {UPSERT_AGENT, UPSERT_COUNT} from './aggregates.js'
import type {Param, SqliteDatabase} from './database.js'
import {RecordedOrder} from './recent.js'
import {
  checkpointRow,
  eventRow,
  INSERT_CHECKPOINT,
  INSERT_EVENT,
  INSERT_LABEL,
  INSERT_TIMESTAMP,
  labelRows,
  timestampRow,
} from './schema.js'

/** The heads of the agents named by a JSON array. */
const HEADS_OF_JSON =
  'SELECT json_array(agent_id, last_sequence, head_hash) FROM agents WHERE agent_id IN (SELECT value FROM json_each(?))'

export class Tables {
  nextIndex = 0
  rowCount = 0
  /**
   * The events the recorded heads account for: the sum of every agent's last sequence (sequences
   * run 1..n). Equal to rowCount unless events were added or removed outside the service.
   */
  headsTotal = 0
  recorded = new RecordedOrder('', true)
  closed = false

  constructor(readonly db: SqliteDatabase) {}

  assertOpen(): void {
    if (this.closed) throw new AuditError('storage_unavailable', 'the store is closed')
  }

  number(sql: string, params: Param[] = []): number {
    return Number(this.db.prepare(sql).texts(params)[0])
  }

  meta(key: string): string | undefined {
    return this.db.prepare('SELECT value FROM store_meta WHERE key = ?').texts([key])[0]
  }

  setMeta(key: string, value: string): void {
    this.db.prepare('INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)').runRows([[key, value]])
  }

  erasureEpoch(): number {
    return Number(this.meta('erasure_epoch') ?? 0)
  }

  /** The recorded heads of some agents (the agents table changes with every append). */
  heads(agentIds: string[]): Map<string, AgentHead> {
    const heads = new Map<string, AgentHead>()
    for (const row of this.db.prepare(HEADS_OF_JSON).texts([JSON.stringify(agentIds)])) {
      const [agent_id, last_sequence, head_hash] = JSON.parse(row) as [string, number, string]
      heads.set(agent_id, {agent_id, last_sequence, head_hash})
    }
    return heads
  }

  /**
   * Inserts the events in one transaction and moves the counts with it. Everything that can fail
   * runs before the COMMIT (the order mark included), so that a throw means nothing was stored.
   */
  insertEvents(events: StoredEvent[]): Param[][] {
    const labels: Param[][] = []
    for (const event of events) labelRows(event, labels)
    const aggregates = aggregateRows(events)
    const rows = events.map(eventRow)
    const unordered = this.recorded.wouldBreakOrder(events)
    this.db.transaction(() => {
      this.db.prepare(INSERT_EVENT).runRows(rows)
      if (labels.length > 0) this.db.prepare(INSERT_LABEL).runRows(labels)
      this.db.prepare(UPSERT_AGENT).runRows(aggregates.agents)
      this.db.prepare(UPSERT_COUNT).runRows(aggregates.counts)
      if (unordered) this.setMeta('recorded_at_order', 'unordered')
    })
    // The counts move together, right after the commit (appends compare them).
    this.nextIndex = events[events.length - 1]!.index + 1
    this.rowCount += events.length
    this.headsTotal += events.length
    this.recorded.observe(events)
    return rows
  }

  insertTimestamp(record: TimestampRecord): void {
    this.db.prepare(INSERT_TIMESTAMP).runRows([timestampRow(record)])
  }

  insertCheckpoint(record: CheckpointRecord): void {
    this.db.prepare(INSERT_CHECKPOINT).runRows([checkpointRow(record)])
  }

  checkpointRowid(treeSize: number): number | undefined {
    const sql = 'SELECT rowid FROM checkpoints WHERE tree_size = ? ORDER BY rowid DESC LIMIT 1'
    const [row] = this.db.prepare(sql).texts([treeSize])
    return row === undefined ? undefined : Number(row)
  }

  addCosignatures(treeSize: number, lines: string[]): void {
    const rowid = this.checkpointRowid(treeSize)
    if (rowid === undefined) return
    const [current] = this.db.prepare('SELECT cosignatures FROM checkpoints WHERE rowid = ?').texts([rowid])
    const held = JSON.parse(current!) as string[]
    const merged = [...held, ...lines.filter((line) => !held.includes(line))]
    const update = this.db.prepare('UPDATE checkpoints SET cosignatures = ? WHERE rowid = ?')
    update.runRows([[JSON.stringify(merged), rowid]])
  }
}
