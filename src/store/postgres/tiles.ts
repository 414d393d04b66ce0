/**
 * The Merkle tree as C2SP tlog-tiles hash tiles in `merkle_tiles` (docs/postgres.md, "The Merkle
 * tree in the database"): the tiles new leaves change, their upsert, and the reads of tiles by
 * (level, idx), which the write path and the proofs share.
 */
import type pg from 'pg'
import {appendedTiles, hashLeaf, tileKey, type TileRow} from '../../core/merkle/index.js'
import type {Query} from './database.js'
import {AuditError} from '../../core/errors.js'

/** Tiles given as (level, idx) rows of two array parameters, $levels::smallint[] and $indexes::bigint[]. */
const tilesAt = (levels: string, indexes: string) =>
  `(level, idx) IN (SELECT * FROM unnest(${levels}::smallint[], ${indexes}::bigint[]))`

/**
 * The tiles of three array parameters (levels, indexes, hashes) written over what they replace;
 * `where` (a WHERE clause) lets a statement write them only on a condition.
 */
export const upsertTiles = (levels: string, indexes: string, hashes: string, where = ''): string => `INSERT INTO
    merkle_tiles (level, idx, hashes) SELECT * FROM unnest(${levels}::smallint[], ${indexes}::bigint[],
    ${hashes}::bytea[]) ${where} ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes`

/** The tiles asked for as one JSON array of [level, index, hex] rows (null when there is none). */
export const edgeTilesJson = (levels: string, indexes: string): string =>
  `SELECT json_agg(json_build_array(level, idx, encode(hashes, 'hex'))) FROM merkle_tiles
  WHERE ${tilesAt(levels, indexes)}`

/** The right edge of the tree, as [level, index, hex] rows (null when there is none). */
export const READ_EDGE = `SELECT (${edgeTilesJson('$1', '$2')}) AS edge`

export type TileJson = [number, string, string][] | null

/** The level and index columns of tiles, as the tile reads take them. */
export function tileKeys(tiles: readonly {level: number; index: number}[]): [number[], number[]] {
  return [tiles.map((t) => t.level), tiles.map((t) => t.index)]
}

/** The level, index and hashes columns of tiles, as upsertTiles takes them. */
export function tileColumns(tiles: readonly TileRow[]): [number[], number[], Buffer[]] {
  return [...tileKeys(tiles), tiles.map((t) => t.hashes)]
}

/** The tiles of a TileJson, by tileKey. */
export function tilesOf(rows: TileJson): Map<string, Buffer> {
  const edge = new Map<string, Buffer>()
  for (const [level, idx, hex] of rows ?? []) edge.set(tileKey(level, Number(idx)), Buffer.from(hex, 'hex'))
  return edge
}

/** The tiles that change when the events of `hashes` follow the first `size` (appendedTiles). */
export function tilesAppending(size: number, edge: ReadonlyMap<string, Buffer>, hashes: readonly string[]): TileRow[] {
  return appendedTiles(size, edge, leafHashesOf(hashes, size))
}

/** The leaf hashes of event hashes (RFC 9162 2.1.1: SHA-256(0x00 || d)), back to back. */
function leafHashesOf(hashes: readonly string[], firstIndex: number): Buffer {
  const out = Buffer.alloc(hashes.length * 32)
  hashes.forEach((hash, i) => {
    if (!/^[0-9a-f]{64}$/i.test(hash)) {
      throw new AuditError('internal_error', `the event at index ${firstIndex + i} has a malformed hash: ${hash}`)
    }
    out.set(hashLeaf(Buffer.from(hash, 'hex')), i * 32)
  })
  return out
}

export async function writeTiles(client: pg.ClientBase, tiles: readonly TileRow[]): Promise<void> {
  if (tiles.length === 0) return
  await client.query(upsertTiles('$1', '$2', '$3'), tileColumns(tiles))
}

/** The tiles asked for as stored now; one not stored yet is left out (EventStore.readTreeTiles). */
export async function readTreeTiles(
  query: Query,
  tiles: readonly {level: number; index: number}[],
): Promise<TileRow[]> {
  if (tiles.length === 0) return []
  const rows = await query<{level: number; idx: string; hashes: Buffer}>(
    `SELECT level, idx, hashes FROM merkle_tiles WHERE ${tilesAt('$1', '$2')}`,
    tileKeys(tiles),
  )
  return rows.map((row) => ({level: row.level, index: Number(row.idx), hashes: row.hashes}))
}
