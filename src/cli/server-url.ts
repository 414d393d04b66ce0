/**
 * The URL of `--server` (or AUDIT_TRAIL_SERVER) as a user types it, checked before any request:
 * a mistake in it is an input error (exit 2) with the URL to type instead, never "cannot reach"
 * (docs/api.md: every endpoint is under /v1/, so the URL is the server's root).
 */
import {AuditError} from '../core/errors.js'

/** `host:port` or a bare host name, as typed without a scheme. */
const WITHOUT_SCHEME = /^[\w.-]+(:\d+)?(\/.*)?$|^\[[\da-f:.]+\](:\d+)?(\/.*)?$/i

/** The server's root URL, without a trailing slash; a trailing `/v1` (the API's prefix) is dropped. */
export function parseServerUrl(text: string, from = '--server'): string {
  const source = `${from} ${text}`
  const trimmed = text.trim()
  if (trimmed === '')
    throw new AuditError('validation_error', `${source}: give the URL serve prints, such as http://127.0.0.1:8080`)
  let url: URL | undefined
  try {
    url = new URL(trimmed)
  } catch {
    url = undefined
  }
  // `localhost:8080` parses as the scheme "localhost:", so the scheme is checked by name.
  if (url === undefined || !['http:', 'https:'].includes(url.protocol)) {
    const what = WITHOUT_SCHEME.test(trimmed)
      ? `type ${parseServerUrl(`http://${trimmed}`, from)} (or https:// for a server behind TLS)`
      : 'give the URL serve prints, such as http://127.0.0.1:8080'
    throw new AuditError('validation_error', `${source} is not an http:// or https:// URL: ${what}`)
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw new AuditError(
      'validation_error',
      `${source}: give the server's URL without a query, fragment or credentials (the key goes in --api-key)`,
    )
  const root = url.pathname.replace(/\/+$/, '').replace(/\/v1$/i, '')
  return `${url.origin}${root}`
}

/**
 * The sentence for a TLS handshake that met a plain HTTP server (OpenSSL's "wrong version number",
 * RFC 8446 section 5.1: the first bytes back were no TLS record), or undefined for other failures.
 */
export function plainHttpSentence(base: string, error: unknown): string | undefined {
  const causes: unknown[] = []
  for (let e: unknown = error; e instanceof Error && causes.length < 4; e = (e as Error & {cause?: unknown}).cause)
    causes.push(e)
  const tlsMismatch = causes.some(
    (e) =>
      (e as NodeJS.ErrnoException).code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
      /wrong version number|packet length too long/i.test((e as Error).message),
  )
  if (!tlsMismatch || !base.startsWith('https://')) return undefined
  return (
    `the server at ${base} answers plain HTTP, not TLS: type --server ${base.replace(/^https:/, 'http:')}, ` +
    `or put it behind TLS`
  )
}

/**
 * The path of an API request on `trail` (docs/trails.md): every /v1/ endpoint but the trails' own
 * under /v1/trails/<trail>/; unchanged without a trail.
 */
export function onTrail(path: string, trail: string | undefined): string {
  if (trail === undefined || !path.startsWith('/v1/') || /^\/v1\/trails(\/|$)/.test(path)) return path
  return `/v1/trails/${encodeURIComponent(trail)}${path.slice('/v1'.length)}`
}
