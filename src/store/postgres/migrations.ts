/**
 * The schema's versions and the migrations between them (docs/postgres.md, Set-up and schema):
 * `schema_version` holds the version, MIGRATIONS[v - 1] takes version v - 1 to v, and the
 * upgrades SQL cannot make alone (tiles, `search`, `verbatim`) are made here in the migration's
 * transaction, whichever process starts first.
 */
import type pg from 'pg'
import {tileKey} from '../../core/merkle/index.js'
import {EVENT_ROW, toEvent} from '../event-row.js'
import {inTransaction, queryOn} from './database.js'
import {DatabaseError} from './errors.js'
import {scanRows, hashesBetween} from './scans.js'
import {EVENT_COLUMN_DEFINITIONS, EVENT_JSON} from './schema.js'
import {searchDocument} from './search-text.js'
import {tilesAppending, writeTiles} from './tiles.js'
import {DEFAULT_SCOPE, lockStatement, type TrailScope} from './trail-scope.js'

export const SCHEMA_VERSION = 10

/** The version from which `verbatim` arrays are in EVENT_ROW's order: older ones are rewritten (inVerbatimOrder). */
const VERBATIM_ORDER_VERSION = 8

/** The order of the row arrays PostgreSQL kept in `verbatim` before schema 8 (shorter before schema 6). */
const VERBATIM_7_ORDER = `index id agent_id action_type action_name action_status timestamp labels session_id
  trace_id span_id parent_id input output metadata error duration_ms sequence prev_hash recorded_at hash signature
  salts commitments erased`.split(/\s+/)

/** A `verbatim` array text of schema 7 or older in EVENT_ROW's order (a member it lacks is null). */
function inVerbatimOrder(text: string): string {
  const old = JSON.parse(text) as unknown[]
  return JSON.stringify(EVENT_ROW.map((field) => old[VERBATIM_7_ORDER.indexOf(field.name)] ?? null))
}

export const MIGRATIONS: readonly string[] = [
  `
CREATE TABLE log_state (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  size bigint NOT NULL
);
INSERT INTO log_state (size) VALUES (0);
CREATE TABLE events (
  ${EVENT_COLUMN_DEFINITIONS},
  verbatim text,
  search tsvector NOT NULL,
  UNIQUE (agent_id, sequence)
);
CREATE INDEX events_by_agent ON events (agent_id, "index");
CREATE INDEX events_by_action_type ON events (action_type, "index");
CREATE INDEX events_by_timestamp ON events ("timestamp");
CREATE INDEX events_by_recorded_at ON events (recorded_at);
CREATE INDEX events_by_trace ON events (trace_id, "index") WHERE trace_id IS NOT NULL;
CREATE INDEX events_by_session ON events (session_id, "index") WHERE session_id IS NOT NULL;
CREATE INDEX events_by_labels ON events USING gin (labels jsonb_path_ops);
CREATE INDEX events_by_text ON events USING gin (search);
CREATE TABLE agents (
  agent_id text PRIMARY KEY,
  event_count bigint NOT NULL,
  first_activity text NOT NULL,
  last_activity text NOT NULL,
  last_sequence bigint NOT NULL,
  head_hash text NOT NULL,
  last_recorded_at text NOT NULL
);
CREATE TABLE action_counts (
  field text NOT NULL,
  value text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (field, value)
);
CREATE TABLE embedded_tsa (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  ca_cert_pem text NOT NULL,
  tsa_cert_pem text NOT NULL,
  tsa_key_pem text NOT NULL
);
CREATE TABLE turns (
  name text PRIMARY KEY,
  taken_at timestamptz NOT NULL
);
CREATE TABLE timestamps (
  position bigserial PRIMARY KEY,
  merkle_root text NOT NULL,
  tree_size bigint NOT NULL,
  "timestamp" text NOT NULL,
  tsa text NOT NULL,
  token text NOT NULL,
  reset_reason text
);
`,
  // 2: C2SP checkpoints with their cosignatures, and the log's signing key (docs/checkpoints.md).
  `
CREATE TABLE checkpoints (
  position bigserial PRIMARY KEY,
  tree_size bigint NOT NULL,
  root text NOT NULL,
  note text NOT NULL,
  cosignatures jsonb NOT NULL,
  signed_at text NOT NULL
);
CREATE TABLE log_key (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  private_key_pem text NOT NULL
);
`,
  // 3: the Merkle tree's hash tiles (docs/postgres.md); buildTiles fills them for existing events.
  `
CREATE TABLE merkle_tiles (
  level smallint NOT NULL,
  idx bigint NOT NULL,
  hashes bytea NOT NULL,
  PRIMARY KEY (level, idx)
);
`,
  // 4: `search` also holds pairs of adjacent tokens; the rows are rebuilt by rebuildSearch.
  `COMMENT ON COLUMN events.search IS 'the searched tokens with their positions, and pairs of adjacent tokens'`,
  // 5: the CA certificates of every external TSA that issued a token for this log (docs/postgres.md,
  // "The log's identity"), so that the database alone verifies its timestamps.
  `
CREATE TABLE IF NOT EXISTS tsa_anchors (
  position bigserial PRIMARY KEY,
  pem text NOT NULL UNIQUE
);
`,
  // 6: payload commitments and agent signatures (docs/verification.md 2); NULL on older events.
  `ALTER TABLE events ADD COLUMN IF NOT EXISTS signature text, ADD COLUMN IF NOT EXISTS salts jsonb,
  ADD COLUMN IF NOT EXISTS commitments jsonb, ADD COLUMN IF NOT EXISTS erased jsonb`,
  // 7: erasures whose intent is durable and whose effect may not be yet (docs/erasure.md).
  `CREATE TABLE IF NOT EXISTS pending_erasures (
  id text PRIMARY KEY,
  intent jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
)`,
  // 8: `verbatim` arrays in the order of the declared row (event-row.ts), rewritten by reorderVerbatim
  // (VERBATIM_ORDER_VERSION).
  `COMMENT ON COLUMN events.verbatim IS
    'an event PostgreSQL cannot hold exactly, as its row array in the declared order'`,
  // 9: forwarding positions per destination and trail, and which process sends to each
  // destination (docs/forwarding.md).
  `
CREATE TABLE IF NOT EXISTS forwarding_positions (
  destination text NOT NULL,
  trail text NOT NULL,
  url text NOT NULL,
  position bigint NOT NULL,
  updated_at timestamptz NOT NULL,
  last_error text,
  last_error_at timestamptz,
  PRIMARY KEY (destination, trail)
);
CREATE TABLE IF NOT EXISTS forwarding_leases (
  destination text PRIMARY KEY,
  holder text NOT NULL,
  lease_until timestamptz NOT NULL
);
`,
  // 10: `search` made from the searched fields in the declared order (event-row.ts: error after the
  // payload members); the rows are rebuilt by rebuildSearch (SEARCH_ORDER_VERSION).
  `COMMENT ON COLUMN events.search IS
    'the searched tokens with their positions, fields in their declared order, and pairs of adjacent tokens'`,
]

/** The version whose migration creates merkle_tiles: a database migrated from below it gets its tiles built. */
const TILES_VERSION = 3
/**
 * The version from which `search` is what this version's searchDocument makes (search-text.ts): pairs
 * of adjacent tokens since 4, the fields in SEARCHED_FIELDS' order since 9. Older rows get theirs rebuilt.
 */
const SEARCH_ORDER_VERSION = 10

/** Serialises schema changes of processes starting at once (pg_advisory_xact_lock key). */
const MIGRATION_LOCK = 0x61747261

/**
 * The trail's own state, beside the numbered migrations (docs/trails.md, Sealing): its name and
 * when it was sealed. Every schema has it, so that the write path reads it under the log's lock.
 */
export const TRAIL_STATE = `CREATE TABLE IF NOT EXISTS trail_state (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  name text NOT NULL,
  sealed_at timestamptz
)`

/** Creates or updates the schema, once, whichever process starts first. */
export async function migrate(pool: pg.Pool, scope: TrailScope = DEFAULT_SCOPE): Promise<void> {
  const client = await pool.connect()
  try {
    await inTransaction(client, () => migrateOn(client, scope))
  } finally {
    client.release()
  }
}

/** The migrations of `scope`'s tables on `client`, inside the caller's transaction. */
export async function migrateOn(client: pg.ClientBase, scope: TrailScope): Promise<void> {
  const key = scope.lockKey(MIGRATION_LOCK)
  await client.query(lockStatement('pg_advisory_xact_lock', key), key)
  await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)')
  const {rows} = await client.query<{version: number}>('SELECT version FROM schema_version')
  const current = rows[0]?.version ?? 0
  if (current > SCHEMA_VERSION) {
    throw new DatabaseError(
      `the database holds schema version ${current}, newer than this program's ${SCHEMA_VERSION}: upgrade ` +
        `audit-trail`,
    )
  }
  for (let version = current + 1; version <= SCHEMA_VERSION; version++) await client.query(MIGRATIONS[version - 1]!)
  if (current > 0 && current < TILES_VERSION) await buildTiles(client)
  if (current > 0 && current < VERBATIM_ORDER_VERSION) await reorderVerbatim(client)
  if (current > 0 && current < SEARCH_ORDER_VERSION) await rebuildSearch(client)
  if (rows.length === 0) await client.query('INSERT INTO schema_version (version) VALUES ($1)', [SCHEMA_VERSION])
  else await client.query('UPDATE schema_version SET version = $1', [SCHEMA_VERSION])
  await client.query(TRAIL_STATE)
}

/**
 * The hash tiles of the events stored before the tiles were kept (an upgrade), built once, in
 * batches of whole tiles, inside the migration's transaction.
 */
async function buildTiles(client: pg.ClientBase): Promise<void> {
  const {
    rows: [state],
  } = await client.query<{size: string}>('SELECT size FROM log_state')
  const edge = new Map<string, Buffer>()
  for await (const {from, hashes} of hashesBetween(queryOn(client), 0, Number(state!.size))) {
    const tiles = tilesAppending(from, edge, hashes)
    await writeTiles(client, tiles)
    for (const tile of tiles) edge.set(tileKey(tile.level, tile.index), tile.hashes)
  }
}

/** The `verbatim` arrays of an older schema rewritten in EVENT_ROW's order, inside the migration. */
async function reorderVerbatim(client: pg.ClientBase): Promise<void> {
  const {rows} = await client.query<{index: string; verbatim: string}>(
    'SELECT "index", verbatim FROM events WHERE verbatim IS NOT NULL',
  )
  if (rows.length === 0) return
  await client.query(
    `UPDATE events SET verbatim = u.verbatim FROM unnest($1::bigint[], $2::text[]) AS u("index", verbatim)
     WHERE events."index" = u."index"`,
    [rows.map((r) => r.index), rows.map((r) => inVerbatimOrder(r.verbatim))],
  )
}

/** Every row's `search` made again by this version's searchDocument, in batches, inside the migration. */
async function rebuildSearch(client: pg.ClientBase): Promise<void> {
  for await (const rows of scanRows(queryOn(client), EVENT_JSON, {})) {
    await client.query(
      `UPDATE events SET search = u.search::tsvector FROM unnest($1::bigint[], $2::text[]) AS u("index", search)
       WHERE events."index" = u."index"`,
      [rows.map((r) => r.index), rows.map((r) => searchDocument(toEvent(r.row)))],
    )
  }
}
