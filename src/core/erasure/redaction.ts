/**
 * `redact` of GET /v1/export and `export --redact` (docs/api.md): payload members to withhold from
 * the package, comma-separated (`input,output`). An unknown member is refused, not ignored: a
 * package meant to withhold `outputs` must not go out with every output in it.
 */
import {validationError} from '../errors.js'
import {PAYLOAD_MEMBERS} from '../event/fields.js'
import type {QueryParams} from '../query-params.js'
import type {PayloadMemberName} from '../types.js'

/** The members `redact` names, in PAYLOAD_MEMBERS order; none when it is absent. */
export function parseRedaction(params: QueryParams): PayloadMemberName[] {
  const value = params.redact
  if (value === undefined) return []
  const known: readonly string[] = PAYLOAD_MEMBERS
  const names = typeof value === 'string' ? value.split(',').map((name) => name.trim()) : []
  const unknown = names.filter((name) => !known.includes(name))
  if (typeof value !== 'string' || names.length === 0 || unknown.length > 0) {
    const message =
      typeof value !== 'string'
        ? 'must be given once'
        : `must be a comma-separated list of ${PAYLOAD_MEMBERS.join(', ')}` +
          (unknown.length > 0 ? ` (not ${unknown.map((name) => JSON.stringify(name)).join(', ')})` : '')
    throw validationError([{field: 'redact', message}])
  }
  return PAYLOAD_MEMBERS.filter((member) => names.includes(member))
}
