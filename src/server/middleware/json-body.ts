/**
 * JSON request bodies: application/json only, in UTF-8 (415 otherwise), a size limit per route
 * (413), and malformed JSON, invalid UTF-8 or a member given twice answered 400 invalid_json
 * (docs/api.md).
 *
 * koa-body reads the body (limit, decompression); the parse is the platform's JSON.parse, which
 * keeps keys such as `__proto__` as ordinary own properties. co-body's JSON mode would refuse them
 * outright, and events may legitimately carry them as data (issue 8).
 */
import {isUtf8} from 'node:buffer'
import type {Context, Next} from 'koa'
import {koaBody} from 'koa-body'
import {AuditError} from '../../core/errors.js'
import {DuplicateMemberError, findDuplicateMembers, type JsonPath} from '../../core/json/duplicate-members.js'

export const MiB = 1024 * 1024
/** What koa-body's decompressor (inflation) reads. */
const ENCODINGS = new Set(['identity', 'gzip', 'deflate', 'br'])

function hasBody(ctx: Context): boolean {
  return (ctx.request.length ?? 0) > 0 || ctx.get('transfer-encoding') !== ''
}

/** A member given twice in the body: readers that keep the first and the last would disagree (RFC 7493 2.3). */
function duplicateMemberError(path: JsonPath): AuditError {
  const {message, path: where} = new DuplicateMemberError(path, 'the request body')
  return new AuditError('invalid_json', message, {details: [{field: where, message: 'is given twice'}]})
}

/**
 * `optional`: a request without a body goes through with `ctx.request.body` undefined.
 * `elements`: a body that is an array is refused only for a duplicate outside its elements; an
 * element with one is left in `ctx.state.refusedElements` (index -> error) for the route, whose
 * elements succeed or fail alone (POST /v1/batch).
 */
export function jsonBody(limitBytes: number, options: {optional?: boolean; elements?: boolean} = {}) {
  const readText = koaBody({
    json: false,
    text: true,
    textTypes: ['application/json', 'application/*+json'],
    textLimit: limitBytes,
    // Read byte for byte (latin1 maps each byte to one code unit), so that the UTF-8 check below
    // sees the bytes the client sent: a UTF-8 decode would turn invalid ones into U+FFFD.
    encoding: 'latin1',
    urlencoded: false,
    multipart: false,
    patchNode: false,
  })
  return async function readJson(ctx: Context, next: Next): Promise<void> {
    if (!hasBody(ctx) && options.optional) return next()
    // An empty body is no JSON text (RFC 8259 section 2), as a body of blanks is not.
    if (!hasBody(ctx)) throw new AuditError('invalid_json', 'the request body is empty: a JSON value is required')
    // Said first: a body in an encoding this server cannot read has no media type it could check.
    const encoding = ctx.get('content-encoding').trim().toLowerCase()
    if (encoding !== '' && !ENCODINGS.has(encoding)) {
      const message = `Content-Encoding ${encoding} is not supported (identity, gzip, deflate, br)`
      throw new AuditError('unsupported_media_type', message)
    }
    if (!ctx.is('application/json', '+json')) {
      throw new AuditError('unsupported_media_type', 'the request body must be application/json')
    }
    const charset = ctx.request.charset
    if (charset !== '' && !/^utf-?8$/i.test(charset)) {
      throw new AuditError(
        'unsupported_media_type',
        `charset ${charset} is not supported: JSON is UTF-8 (RFC 8259 section 8.1)`,
      )
    }
    if ((ctx.request.length ?? 0) > limitBytes) {
      throw new AuditError('payload_too_large', `the request body is larger than ${limitBytes} bytes`)
    }
    let read = false
    try {
      await readText(ctx, async () => {
        read = true
        const bytes = Buffer.from(typeof ctx.request.body === 'string' ? ctx.request.body : '', 'latin1')
        // Invalid UTF-8 is refused, not repaired: nothing a client sends is silently changed.
        if (!isUtf8(bytes))
          throw new AuditError('invalid_json', 'the request body is not valid UTF-8 (RFC 8259 section 8.1)')
        // The decoded size, for limits on parts of the body (a /v1/batch element).
        ctx.state.bodyBytes = bytes.length
        const text = bytes.toString('utf8')
        try {
          ctx.request.body = JSON.parse(text)
        } catch {
          throw new AuditError('invalid_json', 'the request body is not valid JSON')
        }
        const duplicates = findDuplicateMembers(text, {perElement: options.elements})
        if (options.elements && Array.isArray(ctx.request.body)) {
          ctx.state.refusedElements = new Map(duplicates.map((d) => [d.path[0], duplicateMemberError(d.path)]))
        } else if (duplicates[0]) {
          throw duplicateMemberError(duplicates[0].path)
        }
        await next()
      })
    } catch (error) {
      throw read ? error : readError(ctx, error as {status?: number; type?: string})
    }
  }
}

/**
 * A body that could not be read. The decompressor's errors (zlib's Z_DATA_ERROR, brotli's
 * ERR__ERROR_FORMAT_...) carry no HTTP status, unlike raw-body's own, and would end as a 500.
 */
function readError(ctx: Context, error: {status?: number; type?: string}): unknown {
  const encoding = ctx.get('content-encoding').trim().toLowerCase()
  if (error.type === 'encoding.unsupported') {
    return new AuditError(
      'unsupported_media_type',
      `Content-Encoding ${encoding} is not supported (identity, gzip, deflate, br)`,
    )
  }
  if (error.status === undefined && encoding !== '' && encoding !== 'identity') {
    return new AuditError('invalid_json', `the request body is not valid ${encoding} data`)
  }
  return error
}
