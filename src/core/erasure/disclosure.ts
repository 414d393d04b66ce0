/**
 * A disclosure (docs/verification.md 11): one payload member of one event, handed to an auditor who
 * holds a package that withholds it (`redacted`). `{"event_id", "member", "value", "salt"}`: the
 * value and its salt recompute the commitment the package's event carries, as an SD-JWT disclosure
 * recomputes its digest (RFC 9901 section 4.2). A file holds one such object or an array of them.
 */
import {validationError, type FieldError} from '../errors.js'
import {commitmentOf, SALT_PATTERN} from '../event/commitment.js'
import {PAYLOAD_MEMBERS} from '../event/fields.js'
import {checkJsonValue} from '../event/json.js'
import type {Json, PayloadMemberName, StoredEvent} from '../types.js'

export interface Disclosure {
  event_id: string
  member: PayloadMemberName
  value: Json
  salt: string
}

export interface DisclosureVerdict {
  event_id: string
  member: string
  valid: boolean
  /** The commitment the value was checked against, when the package has one. */
  commitment?: string
  message: string
}

const MEMBERS = ['event_id', 'member', 'value', 'salt']

function parseOne(value: unknown, at: string, errors: FieldError[]): Disclosure | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.push({field: at || 'disclosure', message: 'must be an object {"event_id", "member", "value", "salt"}'})
    return undefined
  }
  const record = value as Record<string, unknown>
  const before = errors.length
  for (const key of Object.keys(record)) {
    if (!MEMBERS.includes(key)) errors.push({field: `${at}${key}`, message: 'is not a member of a disclosure'})
  }
  if (typeof record.event_id !== 'string') errors.push({field: `${at}event_id`, message: 'must be a string'})
  if (!(PAYLOAD_MEMBERS as readonly unknown[]).includes(record.member)) {
    errors.push({field: `${at}member`, message: `must be one of ${PAYLOAD_MEMBERS.join(', ')}`})
  }
  if (typeof record.salt !== 'string' || !SALT_PATTERN.test(record.salt)) {
    errors.push({field: `${at}salt`, message: 'must be 64 lower-case hex characters'})
  }
  if (!Object.hasOwn(record, 'value')) errors.push({field: `${at}value`, message: 'is required'})
  else {
    const problem = checkJsonValue(record.value)
    if (problem !== undefined) errors.push({field: `${at}value`, message: problem})
  }
  return errors.length === before ? (record as unknown as Disclosure) : undefined
}

/** The disclosures of a parsed file; throws validation_error naming each problem. */
export function parseDisclosures(value: unknown): Disclosure[] {
  const errors: FieldError[] = []
  const items = Array.isArray(value) ? value : [value]
  if (items.length === 0) errors.push({field: 'disclosure', message: 'must hold at least one disclosure'})
  const disclosures = items.map((item, i) => parseOne(item, Array.isArray(value) ? `[${i}].` : '', errors))
  if (errors.length > 0) throw validationError(errors)
  return disclosures as Disclosure[]
}

/** Whether a disclosure recomputes the commitment of its member in the package's event. */
export function checkDisclosure(events: readonly StoredEvent[], disclosure: Disclosure): DisclosureVerdict {
  const {event_id, member} = disclosure
  const verdict = {event_id, member}
  const event = events.find((candidate) => candidate.id === event_id)
  if (event === undefined) return {...verdict, valid: false, message: `event ${event_id} is not in the package`}
  const commitment = event.commitments?.[member]
  if (commitment === undefined) {
    return {...verdict, valid: false, message: `event ${event_id} has no commitment to ${member}`}
  }
  const recomputed = commitmentOf(disclosure.salt, disclosure.value)
  return recomputed === commitment
    ? {...verdict, valid: true, commitment, message: `${member} of event ${event_id} matches its commitment`}
    : {
        ...verdict,
        valid: false,
        commitment,
        message: `${member} of event ${event_id} does not match its commitment (recomputed ${recomputed})`,
      }
}
