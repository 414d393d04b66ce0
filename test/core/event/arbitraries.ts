/** fast-check arbitraries for events, shared by the event and chain tests. */
import fc from 'fast-check'
import type {HashedContent, Json} from '../../../src/core/types.js'

/** Strings that stress JSON escaping: quotes, backslashes, controls, separators, emoji, accents. */
const tricky = fc.constantFrom(
  '"',
  '\\',
  '\n',
  '\r',
  '\t',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u2028',
  '\u2029',
  '/',
  'é',
  '€',
  '😀',
  '\ufb33',
  '\u0080',
)
export const anyText = fc.oneof(
  fc.string({unit: 'binary', maxLength: 24}),
  fc.array(fc.oneof(tricky, fc.string({maxLength: 3})), {maxLength: 8}).map((parts) => parts.join('')),
)

/** Keys whose sort order or handling differs between naive and correct code. */
const oddKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'toString',
  'toJSON',
  '10',
  '9',
  '1',
  '',
  '😀',
  '\ufb33',
  '\r',
  'é',
  'a"b',
)
const jsonKey = fc.oneof(oddKey, anyText)

/** Any JSON value with odd keys, unicode strings and numbers of every magnitude. */
export const jsonValue: fc.Arbitrary<Json> = fc.letrec<{value: Json}>((tie) => ({
  value: fc.oneof(
    {depthSize: 'small', withCrossShrink: true},
    fc.constant(null),
    fc.boolean(),
    fc.double({noNaN: true, noDefaultInfinity: true}),
    fc.integer(),
    anyText,
    fc.array(tie('value'), {maxLength: 4}),
    // fc.dictionary defines keys as own properties, so `__proto__` stays a key.
    fc.dictionary(jsonKey, tie('value'), {maxKeys: 5}),
  ),
})).value

export const labelKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toJSON', '10', '9', 'env', 'a.b', 'A', 'k:v', '-'),
  fc.stringMatching(/^[A-Za-z0-9_.:-]{1,64}$/),
)
export const labels = fc.dictionary(labelKey, anyText, {maxKeys: 70})
export const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/)

/** Any HashedContent, optional members present or absent. Values need not pass validation. */
export const hashedContent: fc.Arbitrary<HashedContent> = fc.record(
  {
    id: fc.uuid(),
    agent_id: anyText,
    action_type: fc.stringMatching(/^[A-Z][A-Z0-9_]{0,10}$/),
    action_name: anyText,
    action_status: fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/),
    timestamp: fc.date({noInvalidDate: true}).map((d) => d.toISOString()),
    labels,
    session_id: anyText,
    trace_id: anyText,
    span_id: anyText,
    parent_id: anyText,
    input: jsonValue,
    output: jsonValue,
    metadata: jsonValue,
    error: anyText,
    duration_ms: fc.oneof(fc.double({min: 0, noNaN: true, noDefaultInfinity: true}), fc.nat()),
    sequence: fc.integer({min: 1}),
    prev_hash: hex64,
    recorded_at: fc.date({noInvalidDate: true}).map((d) => d.toISOString()),
  },
  {
    requiredKeys: [
      'id',
      'agent_id',
      'action_type',
      'action_name',
      'action_status',
      'timestamp',
      'labels',
      'sequence',
      'prev_hash',
      'recorded_at',
    ],
  },
)
