/**
 * Trail names and agent patterns (docs/trails.md): what a key line's `trail=`
 * and `agent=` bindings and `trails create` accept.
 */
import {AuditError} from '../errors.js'

/** A trail's name: a path segment, a PostgreSQL identifier part and a directory name alike. */
export const TRAIL_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/

export const DEFAULT_TRAIL = 'default'

export const TRAIL_NAME_RULE = 'a trail name is 1 to 63 characters of a-z 0-9 and -, starting with a letter or digit'

export function isTrailName(name: string): boolean {
  return TRAIL_NAME.test(name)
}

/** The name, or a 400 naming the rule. */
export function checkTrailName(name: string): string {
  if (!isTrailName(name)) throw new AuditError('validation_error', `${TRAIL_NAME_RULE}: '${name}'`)
  return name
}

/** An agent pattern of a key line: no space or comma (they separate), `*` any run of characters. */
export const AGENT_PATTERN = /^[^\s,\p{Cc}]{1,256}$/u

/** Whether an agent id matches one of the patterns (`*` matches any run of characters, also none). */
export function agentMatcher(patterns: readonly string[]): (agentId: string) => boolean {
  const expressions = patterns.map(
    (pattern) => new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`, 'su'),
  )
  return (agentId) => expressions.some((expression) => expression.test(agentId))
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')
}
