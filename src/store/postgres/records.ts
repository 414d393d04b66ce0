/**
 * The log's records beside its events: RFC 3161 timestamps in issue order, C2SP checkpoints with
 * their witness cosignatures (docs/checkpoints.md), and the periodic turns processes take in turn
 * (docs/postgres.md, Several writers, one log).
 */
import type pg from 'pg'
import {AuditError} from '../../core/errors.js'
import type {CheckpointRecord, TimestampRecord} from '../../core/types.js'
import type {Query} from './database.js'

const TIMESTAMP_COLUMNS = 'merkle_root, tree_size, "timestamp", tsa, token, reset_reason'
type TimestampRow = {
  position: string
  merkle_root: string
  tree_size: string
  timestamp: string
  tsa: string
  token: string
  reset_reason: string | null
}

function toTimestampRecord(r: TimestampRow): TimestampRecord {
  const record: TimestampRecord = {
    merkle_root: r.merkle_root,
    tree_size: Number(r.tree_size),
    timestamp: r.timestamp,
    tsa: r.tsa,
    token: r.token,
  }
  if (r.reset_reason !== null) record.reset_reason = r.reset_reason
  return record
}

/** The timestamps `rest` (a WHERE and ORDER BY clause of `params`) selects, each with its position. */
export async function timestampsAt(
  query: Query,
  rest: string,
  params: unknown[] = [],
): Promise<{position: number; record: TimestampRecord}[]> {
  const rows = await query<TimestampRow>(`SELECT position, ${TIMESTAMP_COLUMNS} FROM timestamps ${rest}`, params)
  return rows.map((row) => ({position: Number(row.position), record: toTimestampRecord(row)}))
}

export async function listTimestamps(query: Query): Promise<TimestampRecord[]> {
  return (await timestampsAt(query, 'ORDER BY position')).map((t) => t.record)
}

/**
 * Inside a transaction: inserts the timestamp and notifies every listening process of its position
 * at commit (channels.ts), whose streams announce it; resolves with that position.
 */
export async function appendTimestamp(
  client: pg.ClientBase,
  record: TimestampRecord,
  channel: string,
): Promise<number> {
  const {
    rows: [row],
  } = await client.query<{position: string}>(
    `INSERT INTO timestamps (${TIMESTAMP_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) RETURNING position`,
    [record.merkle_root, record.tree_size, record.timestamp, record.tsa, record.token, record.reset_reason ?? null],
  )
  await client.query('SELECT pg_notify($1, $2)', [channel, row!.position])
  return Number(row!.position)
}

const CHECKPOINT_COLUMNS = 'tree_size, root, note, cosignatures, signed_at'
type CheckpointRow = {
  tree_size: string
  root: string
  note: string
  cosignatures: string[]
  signed_at: string
}

/** The checkpoints in the order `order` (an ORDER BY clause and any LIMIT) gives. */
async function checkpoints(query: Query, order: string): Promise<CheckpointRecord[]> {
  const rows = await query<CheckpointRow>(`SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints ${order}`)
  return rows.map((row) => ({
    tree_size: Number(row.tree_size),
    root: row.root,
    note: row.note,
    cosignatures: row.cosignatures,
    signed_at: row.signed_at,
  }))
}

export function listCheckpoints(query: Query): Promise<CheckpointRecord[]> {
  return checkpoints(query, 'ORDER BY position')
}

export async function latestCheckpoint(query: Query): Promise<CheckpointRecord | undefined> {
  return (await checkpoints(query, 'ORDER BY position DESC LIMIT 1'))[0]
}

export async function appendCheckpoint(query: Query, record: CheckpointRecord): Promise<void> {
  await query(`INSERT INTO checkpoints (${CHECKPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5)`, [
    record.tree_size,
    record.root,
    record.note,
    JSON.stringify(record.cosignatures),
    record.signed_at,
  ])
}

/** Inside a transaction: the newest checkpoint of `treeSize` gets the cosignatures it lacks, in order. */
export async function appendCosignatures(client: pg.ClientBase, treeSize: number, lines: string[]): Promise<void> {
  const {rows} = await client.query<{position: string; cosignatures: string[]}>(
    'SELECT position, cosignatures FROM checkpoints WHERE tree_size = $1 ORDER BY position DESC LIMIT 1 FOR UPDATE',
    [treeSize],
  )
  if (rows.length === 0) throw new AuditError('not_found', `no checkpoint of tree size ${treeSize}`)
  const held = rows[0]!.cosignatures
  const merged = [...held, ...lines.filter((line) => !held.includes(line))]
  await client.query('UPDATE checkpoints SET cosignatures = $1 WHERE position = $2', [
    JSON.stringify(merged),
    rows[0]!.position,
  ])
}

/** Whether this process takes the turn `name` now: at most one process in any `periodMs` does. */
export async function claimTurn(query: Query, name: string, periodMs: number): Promise<boolean> {
  // One statement: a second process waits for the first's row lock, then sees its new taken_at.
  const rows = await query(
    `INSERT INTO turns (name, taken_at) VALUES ($1, now())
    ON CONFLICT (name) DO UPDATE SET taken_at = now() WHERE turns.taken_at <= now() - $2 * interval '1 millisecond'
    RETURNING name`,
    [name, periodMs],
  )
  return rows.length === 1
}
