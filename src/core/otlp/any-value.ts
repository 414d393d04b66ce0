/**
 * Attribute values: `AnyValue` and `KeyValue` of opentelemetry-proto `common/v1/common.proto`,
 * turned into plain JSON so that they can be stored in an event's `metadata` and hashed with
 * RFC 8785 (which needs finite numbers and well-formed strings).
 *
 * | AnyValue      | JSON                                                                  |
 * |---------------|-----------------------------------------------------------------------|
 * | string_value  | string                                                                |
 * | bool_value    | boolean                                                               |
 * | int_value     | number when it is a safe integer (|n| <= 2^53 - 1), else decimal string |
 * | double_value  | number; NaN and the infinities as "NaN", "Infinity", "-Infinity"       |
 * | array_value   | array                                                                 |
 * | kvlist_value  | object                                                                |
 * | bytes_value   | base64 string                                                         |
 * | empty         | null                                                                  |
 */
import type {Json} from '../types.js'
import {failField, readBool, readBytes, readDouble, readInt64, readList, readObject, readString} from './fields.js'
import type {AttributeMap} from './span.js'

/** Nesting of arrays and kvlists accepted in one value; deeper is refused as bad data. */
export const MAX_ANY_VALUE_DEPTH = 32

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER)
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

function decodeInt(value: unknown, path: string): Json {
  // The JS SDK sends every integral JS number as int_value, even one beyond int64 such as 1e20.
  if (typeof value === 'number' && Number.isInteger(value)) {
    return Number.isSafeInteger(value) ? value : BigInt(value).toString()
  }
  const integer = readInt64(value, path)
  return integer >= MIN_SAFE && integer <= MAX_SAFE ? Number(integer) : integer.toString()
}

function decodeDouble(value: unknown, path: string): Json {
  const number = readDouble(value, path)
  // String(NaN) is "NaN" and String(-Infinity) is "-Infinity": the proto3 JSON spellings.
  return Number.isFinite(number) ? number : String(number)
}

/** Sets a key as an own data property, so that keys like `__proto__` stay plain data. */
function setKey(target: AttributeMap, key: string, value: Json): void {
  Object.defineProperty(target, key, {value, enumerable: true, writable: true, configurable: true})
}

/** One `AnyValue` as JSON. `depth` counts the arrays and kvlists it is nested in. */
export function decodeAnyValue(value: unknown, path: string, depth = 0): Json {
  if (depth > MAX_ANY_VALUE_DEPTH) failField(path, `must not be nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`)
  const any = readObject(value, path)
  if (any === undefined) return null
  // A oneof: the first member present wins, in the order of common.proto.
  if (any.stringValue != null) return readString(any.stringValue, `${path}.stringValue`)
  if (any.boolValue != null) return readBool(any.boolValue, `${path}.boolValue`)
  if (any.intValue != null) return decodeInt(any.intValue, `${path}.intValue`)
  if (any.doubleValue != null) return decodeDouble(any.doubleValue, `${path}.doubleValue`)
  if (any.arrayValue != null) {
    const arrayPath = `${path}.arrayValue.values`
    const values = readList(readObject(any.arrayValue, `${path}.arrayValue`)?.values, arrayPath)
    return values.map((item, i) => decodeAnyValue(item, `${arrayPath}[${i}]`, depth + 1))
  }
  if (any.kvlistValue != null) {
    const values = readObject(any.kvlistValue, `${path}.kvlistValue`)?.values
    return decodeAttributes(values, `${path}.kvlistValue.values`, depth + 1)
  }
  if (any.bytesValue != null) return readBytes(any.bytesValue, `${path}.bytesValue`)
  return null
}

/**
 * `repeated KeyValue` as a JSON object. Keys must be unique (common.proto); should one repeat,
 * the last value wins, as it would in a map.
 */
export function decodeAttributes(list: unknown, path: string, depth = 0): AttributeMap {
  const attributes: AttributeMap = {}
  const items = readList(list, path)
  for (let i = 0; i < items.length; i++) {
    const itemPath = `${path}[${i}]`
    const pair = readObject(items[i], itemPath) ?? failField(itemPath, 'must be an object')
    const key = readString(pair.key, `${itemPath}.key`)
    setKey(attributes, key, decodeAnyValue(pair.value, `${itemPath}.value`, depth))
  }
  return attributes
}
