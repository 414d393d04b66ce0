/**
 * Tile paths of C2SP tlog-tiles v1.0.0: `tile/<L>/<N>[.p/<W>]` and `tile/entries/<N>[.p/<W>]`.
 * N is written in zero-padded groups of three digits, every group but the last prefixed with `x`
 * (1234067 is `x001/x234/067`); W, the width of a partial tile, is 1..255.
 */

/** Hashes per full tile; a tile spans 8 levels of the tree (tlog-tiles, "Merkle Tree"). */
export const TILE_WIDTH = 256
export const TILE_HEIGHT = 8
const MAX_TILE_LEVEL = 63

export interface TileAddress {
  /** The tile level 0..63, or `entries` for an entry bundle. */
  level: number | 'entries'
  index: number
  /** 256 for a full tile, 1..255 for a partial one. */
  width: number
}

export function formatTileIndex(index: number): string {
  const digits = String(index)
  const groups: string[] = []
  for (let end = digits.length; end > 0; end -= 3)
    groups.unshift(digits.slice(Math.max(0, end - 3), end).padStart(3, '0'))
  return groups.map((group, i) => (i < groups.length - 1 ? `x${group}` : group)).join('/')
}

export function formatTilePath(tile: TileAddress): string {
  const partial = tile.width < TILE_WIDTH ? `.p/${tile.width}` : ''
  return `tile/${tile.level}/${formatTileIndex(tile.index)}${partial}`
}

/** Parses the part after `tile/`; undefined for anything tlog-tiles does not allow. */
export function parseTilePath(rest: string): TileAddress | undefined {
  const match = /^(entries|0|[1-9][0-9]?)\/((?:x[0-9]{3}\/)*[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/.exec(rest)
  if (!match) return undefined
  const level = match[1] === 'entries' ? 'entries' : Number(match[1])
  if (level !== 'entries' && level > MAX_TILE_LEVEL) return undefined
  const groups = match[2]!.split('/').map((group) => group.replace(/^x/, ''))
  // Zero-padded groups with no leading group of zeros: one spelling per index.
  if (groups.length > 1 && groups[0] === '000') return undefined
  const index = Number(groups.join(''))
  if (!Number.isSafeInteger(index)) return undefined
  const width = match[3] === undefined ? TILE_WIDTH : Number(match[3])
  if (width >= TILE_WIDTH + (match[3] === undefined ? 1 : 0)) return undefined
  return {level, index, width}
}

/** The number of hashes at tile level `level` (tree height 8 * level) in a tree of `size` leaves. */
export function hashesAtLevel(size: number, level: number): number {
  return Math.floor(size / 2 ** (TILE_HEIGHT * level))
}
