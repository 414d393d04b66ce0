/**
 * The bytes of an OTLP/HTTP request body, inflated when `Content-Encoding: gzip` (OTLP
 * specification, "OTLP/HTTP Request": "The client MAY gzip the content"). The server "MUST limit
 * the size of the request body when parsing it, including after decompression": inflating stops
 * as soon as the output passes `maxBytes`, so a small gzip bomb costs no more than `maxBytes`.
 */
import {promisify} from 'node:util'
import {gunzip} from 'node:zlib'
import {AuditError} from '../../core/errors.js'

const gunzipAsync = promisify(gunzip)

/** The OTLP specification's recommended default limit (20 MiB), after decompression. */
export const OTLP_MAX_BODY_BYTES = 20 * 1024 * 1024

function tooLarge(maxBytes: number): AuditError {
  return new AuditError('payload_too_large', `the OTLP request body is larger than ${maxBytes} bytes`)
}

/** `identity` or gzip (RFC 9110 8.4.1); `x-gzip` is gzip (RFC 9110 8.4.1.3). */
function encodingOf(contentEncoding: string | undefined): 'identity' | 'gzip' {
  const name = (contentEncoding ?? '').trim().toLowerCase()
  if (name === '' || name === 'identity') return 'identity'
  if (name === 'gzip' || name === 'x-gzip') return 'gzip'
  throw new AuditError(
    'unsupported_media_type',
    `Content-Encoding "${contentEncoding}" is not supported; send the body uncompressed or with gzip`,
  )
}

/**
 * The request body, inflated if needed. Throws AuditError: `payload_too_large` when it (or what
 * it inflates to) is larger than `maxBytes`, `unsupported_media_type` for an encoding other than
 * gzip, `validation_error` for a body that is not valid gzip.
 */
export async function readOtlpBody(
  raw: Uint8Array,
  contentEncoding: string | undefined,
  maxBytes: number,
): Promise<Uint8Array> {
  const encoding = encodingOf(contentEncoding)
  if (raw.length > maxBytes) throw tooLarge(maxBytes)
  if (encoding === 'identity') return raw
  try {
    // maxOutputLength makes zlib give up with ERR_BUFFER_TOO_LARGE instead of inflating on.
    return await gunzipAsync(raw, {maxOutputLength: maxBytes})
  } catch (error) {
    if ((error as {code?: string}).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxBytes)
    const reason = error instanceof Error ? error.message : String(error)
    throw new AuditError('validation_error', `the body is not valid gzip: ${reason}`, {cause: error})
  }
}
