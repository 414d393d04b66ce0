/**
 * Which trail a request path names (docs/api.md, "Trails"): `/v1/trails/NAME/...` is the `/v1/...`
 * endpoint of trail NAME (`/v1/trails/NAME/entries` the SCITT `/entries`), `/tlog/NAME/...` its
 * C2SP checkpoint and tiles. The trail's routes then see the plain path, so that scopes, public
 * paths and routes are decided once, whatever the trail.
 */

export interface TrailPath {
  /** The trail the path names; absent for an unprefixed path. */
  trail?: string
  /** The path the trail's routes answer. */
  path: string
}

const TRAILS_PREFIX = '/v1/trails/'
/** The first segment of a C2SP tile path after `tile/` (tlog-tiles: a level 0..63 or `entries`). */
const TILE_LEVEL = /^(entries|[0-9]+)$/

/** `/v1/trails/NAME` and `/v1/trails/NAME/seal` are the trail itself, not one of its endpoints. */
function trailResourcePath(rest: string): boolean {
  return rest === '' || rest === '/' || /^\/seal\/?$/.test(rest)
}

function underTrails(path: string): TrailPath {
  const slash = path.indexOf('/', TRAILS_PREFIX.length)
  if (slash < 0) return {path}
  const rest = path.slice(slash)
  if (trailResourcePath(rest)) return {path}
  const trail = path.slice(TRAILS_PREFIX.length, slash)
  return {trail, path: /^\/entries(\/|$)/.test(rest) ? rest : `/v1${rest}`}
}

/**
 * `/tlog/checkpoint` and `/tlog/tile/<L>/...` stay the default trail's, as before trails; any
 * other `/tlog/NAME/<rest>` is trail NAME's `/tlog/<rest>`. A trail named `tile` is no ambiguity:
 * `/tlog/tile/checkpoint` and `/tlog/tile/tile/...` cannot be default tiles, whose next segment is
 * a level; nor is one named `checkpoint`, whose paths have a segment after it.
 */
function underTlog(path: string): TrailPath {
  const segments = path.slice('/tlog/'.length).split('/')
  if (segments.length < 2) return {path}
  if (segments[0] === 'tile' && TILE_LEVEL.test(segments[1]!)) return {path}
  return {trail: segments[0]!, path: `/tlog/${segments.slice(1).join('/')}`}
}

export function splitTrailPath(path: string): TrailPath {
  if (path.startsWith(TRAILS_PREFIX)) return underTrails(path)
  if (path.startsWith('/tlog/')) return underTlog(path)
  return {path}
}
