/**
 * Which trail a request acts on, and whether its key may (docs/trails.md, "Keys bound to trails"):
 * the trail its path names, else the one trail the key is bound to, else `default`. A trail the
 * key is not bound to answers as one that does not exist, so a key learns nothing of the others.
 */
import type {ApiKey} from '../core/auth/keys.js'
import {AuditError} from '../core/errors.js'
import {checkTrailName, DEFAULT_TRAIL} from '../core/trail/name.js'
import type {AuditServices} from '../services/audit.js'
import type {Trails} from '../services/trails.js'

export interface ResolvedTrail {
  name: string
  services: AuditServices
}

export function trailNotFound(name: string): AuditError {
  return new AuditError('trail_not_found', `no trail named ${name}`)
}

/** Whether the key opens the trail (a key without `trail=` opens every trail; no key: auth is off). */
export function mayOpen(key: ApiKey | undefined, name: string): boolean {
  return key?.trails === undefined || key.trails.includes(name)
}

/** The trail an unprefixed path acts on for this key. */
export function unprefixedTrail(key: ApiKey | undefined): string {
  return key?.trails?.length === 1 ? key.trails[0]! : DEFAULT_TRAIL
}

/** The trail `named` (or the key's, or `default`): 400 for a bad name, 404 trail_not_found for one it may not open. */
export async function resolveTrail(
  trails: Trails,
  key: ApiKey | undefined,
  named: string | undefined,
): Promise<ResolvedTrail> {
  const name = named === undefined ? unprefixedTrail(key) : checkTrailName(named)
  if (!mayOpen(key, name)) {
    if (named !== undefined) throw trailNotFound(name)
    throw new AuditError(
      'trail_not_found',
      `the API key opens the trails ${key!.trails!.join(', ')}: name one in the path, /v1/trails/NAME/...`,
    )
  }
  return {name, services: await trails.open(name)}
}

interface TrailState {
  /** The trail the path named (trail-path.ts), before it was resolved. */
  namedTrail?: string
  /** The trail the request acts on, once resolved. */
  trail?: string
}

/** The trail the request's path named, if it named one. */
export function namedTrailOf(ctx: {state: unknown}): string | undefined {
  return (ctx.state as TrailState).namedTrail
}

export function setNamedTrail(ctx: {state: unknown}, name: string): void {
  ;(ctx.state as TrailState).namedTrail = name
}

/** The trail the request acts on; `default` before it was resolved (a service of one log). */
export function trailOf(ctx: {state: unknown}): string {
  return (ctx.state as TrailState).trail ?? DEFAULT_TRAIL
}

export function setTrail(ctx: {state: unknown}, name: string): void {
  ;(ctx.state as TrailState).trail = name
}
