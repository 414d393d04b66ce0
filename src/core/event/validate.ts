/**
 * Validation and normalisation of what a client sends (docs/api.md). Every failing field is
 * reported, not only the first, so that a client can fix a request in one round trip.
 *
 * Decisions of docs/api.md (POST /v1/events) where the format leaves a choice:
 * - `null` is a value, not an absence: it is accepted for `input`, `output` and `metadata` (any
 *   JSON value) and refused for the typed fields, since nothing sent is silently dropped.
 * - Lengths count Unicode code points (see text.ts); strings with unpaired surrogates are refused
 *   everywhere because RFC 8785 cannot hash them.
 * - The fields the service adds (docs/api.md) are refused like any other unknown field.
 */
import {validationError, type FieldError} from '../errors.js'
import type {EventInput, ValidatedEvent} from '../types.js'
import {randomSaltHex} from '../crypto.js'
import {commitPayload, SALT_PATTERN} from './commitment.js'
import {CLIENT_FIELDS, PAYLOAD_MEMBERS, RESERVED_AGENT_PREFIX} from './fields.js'
import {checkJsonValue} from './json.js'
import {checkText, type TextRule} from './text.js'
import {normalizeTimestamp} from './timestamp.js'

export interface ValidateOptions {
  /** Time of receipt: the default `timestamp`. */
  now: Date
  /** Makes the `id` of an event sent without one (a v4 or v7 UUID). */
  generateId: () => string
  /** Draws the salt of a payload member the client sent none for (default: 32 CSPRNG bytes, hex). */
  drawSalt?: () => string
  /** The service recording its own events (erasures, agent keys): may use the reserved agent ids. */
  internal?: boolean
}

export {RESERVED_AGENT_PREFIX}

const REQUIRED = new Set<keyof EventInput>(['agent_id', 'action_type', 'action_name'])
const SERVICE_FIELDS = new Set(['sequence', 'prev_hash', 'recorded_at', 'hash', 'index', 'commitments', 'erased'])
// RFC 7515 7.1 compact serialization with a detached payload (appendix F): `<protected>..<signature>`.
const DETACHED_JWS = /^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/

const TEXT_RULES: Readonly<Record<string, TextRule>> = {
  agent_id: {max: 256, noControl: true},
  action_name: {max: 256, noControl: true},
  session_id: {max: 256},
  trace_id: {max: 256},
  span_id: {max: 256},
  parent_id: {max: 256},
  error: {max: 8192, allowEmpty: true},
}
const PATTERNS: Readonly<Record<string, {pattern: RegExp; max: number}>> = {
  action_type: {pattern: /^[A-Z][A-Z0-9_]*$/, max: 64},
  action_status: {pattern: /^[a-z][a-z0-9_]*$/, max: 32},
}
// RFC 9562 section 4 layout, any version and variant; stored lower-case.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DEFAULTS: Partial<Record<keyof EventInput, (options: ValidateOptions) => unknown>> = {
  id: (options) => options.generateId(),
  action_status: () => 'success',
  timestamp: (options) => options.now.toISOString(),
  labels: () => ({}),
}
const LABEL_KEY = /^[A-Za-z0-9_.:-]{1,64}$/
const MAX_LABELS = 64

type Checked = {value: unknown} | {error: string}

function checkPattern(value: unknown, rule: {pattern: RegExp; max: number}): Checked {
  if (typeof value !== 'string') return {error: 'must be a string'}
  if (value.length === 0) return {error: 'must not be empty'}
  if (value.length > rule.max) return {error: `must be at most ${rule.max} characters`}
  if (!rule.pattern.test(value)) return {error: `must match ${rule.pattern.source}`}
  return {value}
}

/** Labels are rebuilt on a null-prototype object, so a key like `__proto__` stays a key. */
function checkLabels(value: unknown, errors: FieldError[]): Record<string, string> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.push({field: 'labels', message: 'must be an object'})
    return undefined
  }
  const source = value as Record<string, unknown>
  const keys = Object.keys(source)
  const before = errors.length
  if (keys.length > MAX_LABELS) errors.push({field: 'labels', message: `must have at most ${MAX_LABELS} entries`})
  // A plain object, like the ones JSON.parse gives: V8 keeps a null-prototype object in its slow
  // dictionary form, and every label set is serialised several times per event. `__proto__` is
  // then defined as an own member rather than assigned (which would try to set the prototype).
  const labels: Record<string, string> = {}
  for (const key of keys) {
    const field = `labels.${key}`
    if (!LABEL_KEY.test(key)) errors.push({field, message: `key must match ${LABEL_KEY.source}`})
    const problem = checkText(source[key], {max: 1024, allowEmpty: true})
    if (problem) errors.push({field, message: problem})
    else if (key === '__proto__')
      Object.defineProperty(labels, key, {value: source[key], enumerable: true, writable: true, configurable: true})
    else labels[key] = source[key] as string
  }
  return errors.length === before ? labels : undefined
}

/** `salts`: an object of 64-hex salts keyed by payload members (which ones: checkSaltsCover). */
function checkSaltsShape(value: unknown): Checked {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {error: 'must be an object'}
  const salts: Record<string, string> = {}
  for (const [key, salt] of Object.entries(value)) {
    if (!(PAYLOAD_MEMBERS as readonly string[]).includes(key)) return {error: `has ${key}, not a payload member`}
    if (typeof salt !== 'string' || !SALT_PATTERN.test(salt)) {
      return {error: `${key} must be 64 lower-case hex characters (32 bytes)`}
    }
    salts[key] = salt
  }
  return {value: salts}
}

/** Salts sent must cover exactly the payload members sent (docs/api.md). */
function checkSaltsCover(values: Partial<Record<keyof EventInput, unknown>>, errors: FieldError[]): void {
  const salts = values.salts as Record<string, string> | undefined
  if (salts === undefined) return
  for (const member of PAYLOAD_MEMBERS) {
    const sent = values[member] !== undefined
    if (sent && salts[member] === undefined) errors.push({field: `salts.${member}`, message: 'is required'})
    if (!sent && salts[member] !== undefined) {
      errors.push({field: `salts.${member}`, message: `must not be sent without ${member}`})
    }
  }
}

/** What a signature covers, the client chooses itself (docs/signatures.md): the id, the time and the salts. */
function checkSignedFields(values: Partial<Record<keyof EventInput, unknown>>, errors: FieldError[]): void {
  if (values.signature === undefined) return
  for (const name of ['id', 'timestamp'] as const) {
    if (values[name] === undefined) errors.push({field: name, message: 'is required with a signature, which covers it'})
  }
  if (values.salts === undefined && PAYLOAD_MEMBERS.some((member) => values[member] !== undefined)) {
    errors.push({field: 'salts', message: 'is required with a signature, which covers the commitments made with them'})
  }
}

function checkField(name: keyof EventInput, value: unknown, errors: FieldError[]): unknown {
  const textRule = TEXT_RULES[name]
  const patternRule = PATTERNS[name]
  let checked: Checked
  if (textRule) {
    const problem = checkText(value, textRule)
    checked = problem ? {error: problem} : {value}
  } else if (patternRule) {
    checked = checkPattern(value, patternRule)
  } else if (name === 'id') {
    checked = typeof value === 'string' && UUID.test(value) ? {value: value.toLowerCase()} : {error: 'must be a UUID'}
  } else if (name === 'timestamp') {
    checked = typeof value === 'string' ? normalizeTimestamp(value) : {error: 'must be a string'}
  } else if (name === 'labels') {
    return checkLabels(value, errors)
  } else if (name === 'salts') {
    checked = checkSaltsShape(value)
  } else if (name === 'signature') {
    const valid = typeof value === 'string' && value.length <= 4096 && DETACHED_JWS.test(value)
    checked = valid ? {value} : {error: 'must be a JWS compact serialization with a detached payload (<header>..<sig>)'}
  } else if (name === 'duration_ms') {
    const valid = typeof value === 'number' && Number.isFinite(value) && value >= 0
    // -0 passes `>= 0`; store it as 0, which is also how JSON writes it.
    checked = valid ? {value: value + 0} : {error: 'must be a finite number >= 0'}
  } else {
    const problem = checkJsonValue(value)
    checked = problem ? {error: problem} : {value}
  }
  if ('error' in checked) {
    errors.push({field: name, message: checked.error})
    return undefined
  }
  return checked.value
}

/**
 * Validates a request body (already parsed from JSON) as one event and normalises it: `id`
 * lower-cased or generated, `timestamp` in UTC or the time of receipt, `action_status`
 * `success` and `labels` `{}` by default. Throws a validation_error listing every failing field.
 */
export function validateEvent(body: unknown, options: ValidateOptions): ValidatedEvent {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationError([{field: 'body', message: 'must be a JSON object'}])
  }
  const source = body as Record<string, unknown>
  const errors: FieldError[] = []
  const sent: Array<keyof EventInput> = []
  const values: Partial<Record<keyof EventInput, unknown>> = {}

  for (const name of CLIENT_FIELDS) {
    // Own keys only: `constructor` and friends are never read from the prototype.
    const value = Object.hasOwn(source, name) ? source[name] : undefined
    if (value === undefined) {
      if (REQUIRED.has(name)) errors.push({field: name, message: 'is required'})
      continue
    }
    sent.push(name)
    values[name] = checkField(name, value, errors)
  }
  for (const key of Object.keys(source)) {
    if ((CLIENT_FIELDS as readonly string[]).includes(key)) continue
    const message = SERVICE_FIELDS.has(key) ? 'is set by the service and must not be sent' : 'is not a known field'
    errors.push({field: key, message})
  }
  if (errors.length === 0) checkSaltsCover(values, errors)
  if (errors.length === 0) checkSignedFields(values, errors)
  const agentId = values.agent_id
  if (!options.internal && typeof agentId === 'string' && agentId.startsWith(RESERVED_AGENT_PREFIX)) {
    errors.push({field: 'agent_id', message: `must not begin with ${RESERVED_AGENT_PREFIX} (the service's own events)`})
  }
  if (errors.length > 0) throw validationError(errors)

  const event: Record<string, unknown> = {}
  for (const name of CLIENT_FIELDS) {
    const value = values[name] !== undefined ? values[name] : DEFAULTS[name]?.(options)
    if (value !== undefined) event[name] = value
  }
  const input = event as unknown as EventInput
  commitPayload(input, options.drawSalt ?? randomSaltHex)
  return {event: input, sent}
}
