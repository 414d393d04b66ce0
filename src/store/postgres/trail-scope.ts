/**
 * What sets one trail's tables apart from another's in PostgreSQL (docs/trails.md, Storage): the
 * schema its connections search, its LISTEN/NOTIFY channels and its advisory-lock keys. Trail
 * `default` keeps the names and keys it had before trails existed (the connection's own
 * search_path, the channels of channels.ts, one-number lock keys), so that a database written then,
 * and a process of that version still running on it, go on as they did.
 */
import {sha256Hex} from '../../core/crypto.js'
import {DEFAULT_TRAIL} from '../../core/trail/name.js'
import {ERASURE_CHANNEL, EVENTS_CHANNEL, TIMESTAMP_CHANNEL} from './channels.js'

/** PostgreSQL's longest identifier, in bytes (NAMEDATALEN - 1). */
const MAX_IDENTIFIER = 63

export interface TrailScope {
  /** The trail's name. */
  readonly name: string
  /** The schema of its tables; undefined for `default` (the connection's own search_path). */
  readonly schema?: string
  readonly channels: {readonly events: string; readonly timestamps: string; readonly erasures: string}
  /** The arguments of pg_advisory_lock and its kin for the lock `base` of this trail. */
  lockKey(base: number): number[]
}

/**
 * The schema a new trail's tables are made in: `trail_` and its name, which no other trail's can be
 * (names have no `_`); a name too long for that keeps its first 40 characters and a digest of it all.
 */
export function schemaFor(name: string): string {
  const plain = `trail_${name}`
  return plain.length <= MAX_IDENTIFIER ? plain : `trail_${name.slice(0, 40)}_${sha256Hex(name).slice(0, 16)}`
}

/** The first 32 bits of SHA-256 of the trail's name, as a signed int4 (the second key of a two-key lock). */
function nameKey(name: string): number {
  return Number.parseInt(sha256Hex(name).slice(0, 8), 16) | 0
}

/**
 * The scope of trail `name` with its tables in `schema`. Channels are the default's followed by 16
 * hex digits of SHA-256 of the name (a channel is an identifier: a name of 63 characters would not
 * fit); locks take the two-key form (base, nameKey), which PostgreSQL keeps apart from the one-key
 * form of `default`. Two names whose keys collide only wait for each other's migrations or erasures.
 */
export function trailScope(name: string, schema: string): TrailScope {
  const suffix = `_${sha256Hex(name).slice(0, 16)}`
  return {
    name,
    schema,
    channels: {
      events: EVENTS_CHANNEL + suffix,
      timestamps: TIMESTAMP_CHANNEL + suffix,
      erasures: ERASURE_CHANNEL + suffix,
    },
    lockKey: (base) => [base, nameKey(name)],
  }
}

export const DEFAULT_SCOPE: TrailScope = {
  name: DEFAULT_TRAIL,
  channels: {events: EVENTS_CHANNEL, timestamps: TIMESTAMP_CHANNEL, erasures: ERASURE_CHANNEL},
  lockKey: (base) => [base],
}

/** `SELECT fn($1[, $2])` for a lock key of one or two numbers. */
export function lockStatement(fn: string, key: readonly number[]): string {
  return `SELECT ${fn}(${key.map((_, i) => `$${i + 1}`).join(', ')})`
}

/**
 * The URL of `databaseUrl` whose connections search `schema` alone, set when each starts (libpq's
 * `options`), so that the store's statements name their tables as they always did, in every
 * connection it makes: the pool's, LISTEN's and the scan threads'.
 */
export function urlSearching(databaseUrl: string, schema: string): string {
  const url = new URL(databaseUrl)
  const given = url.searchParams.get('options')
  const searchPath = `-c search_path=${quoteIdentifier(schema)}`
  url.searchParams.set('options', given === null ? searchPath : `${given} ${searchPath}`)
  return url.toString()
}

/** A schema name as a quoted identifier (schemaFor's names need no escaping; this keeps any safe). */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}
