/**
 * An external RFC 3161 TSA over HTTP (RFC 3161 section 3.4): POST a DER TimeStampReq as
 * `application/timestamp-query`, read a DER TimeStampResp. The token is kept only once its
 * status, nonce, imprint, signature and certificate chain have been checked; every failure is
 * AuditError('tsa_unavailable') with the reason, which the API answers as 502.
 */
import {randomBytes} from '../../core/crypto.js'
import {AuditError} from '../../core/errors.js'
import {
  buildTimestampRequest,
  describeTimestampToken,
  parseTimestampResponse,
  splitCertificates,
  verifyTimestampToken,
  type IssuedToken,
} from '../../core/timestamp/index.js'
import type {TimestampAuthority} from './authority.js'

export interface ExternalTsaOptions {
  url: string
  /** PEM trust anchors for the TSA's certificate (each string may be a bundle). */
  caPem: string[]
  /** Whole exchange, connect to last byte; default 10 s. */
  timeoutMs?: number
  fetch?: typeof fetch
}

const DEFAULT_TIMEOUT_MS = 10_000
const MAX_RESPONSE_BYTES = 1024 * 1024

export function externalTsa(options: ExternalTsaOptions): TimestampAuthority {
  const url = parseUrl(options.url)
  const anchors = splitCertificates(options.caPem)
  if (anchors.length === 0)
    throw new AuditError('validation_error', 'the TSA trust anchor file holds no PEM certificate')
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const doFetch = options.fetch ?? globalThis.fetch
  // Named without query string or credentials, which may be secret.
  const name = `${url.origin}${url.pathname}`
  const unavailable = (reason: string, cause?: unknown) =>
    new AuditError('tsa_unavailable', `TSA ${name}: ${reason}`, cause === undefined ? {} : {cause})

  async function exchange(query: Uint8Array): Promise<Uint8Array> {
    try {
      const response = await doFetch(url, {
        method: 'POST',
        headers: {'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply'},
        body: new Uint8Array(query),
        signal: AbortSignal.timeout(timeoutMs),
      })
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => undefined)
        throw unavailable(`answered HTTP ${response.status} ${response.statusText}`.trim())
      }
      if (Number(response.headers.get('content-length') ?? 0) > MAX_RESPONSE_BYTES)
        throw unavailable('the response is too large for a TimeStampResp')
      const body = new Uint8Array(await response.arrayBuffer())
      if (body.length > MAX_RESPONSE_BYTES) throw unavailable('the response is too large for a TimeStampResp')
      return body
    } catch (error) {
      if (error instanceof AuditError) throw error
      const failure = error as Error & {cause?: {code?: string; message?: string}}
      if (failure.name === 'TimeoutError' || failure.name === 'AbortError')
        throw unavailable(`no answer within ${timeoutMs} ms`, error)
      throw unavailable(`unreachable (${failure.cause?.code ?? failure.cause?.message ?? failure.message})`, error)
    }
  }

  return {
    kind: 'external',
    async timestamp(digest: Uint8Array): Promise<IssuedToken> {
      const nonce = randomBytes(8)
      const body = await exchange(buildTimestampRequest(digest, nonce, true))
      let token: Uint8Array
      try {
        token = parseTimestampResponse(body, {digest, nonce})
      } catch (error) {
        throw unavailable((error as Error).message, error)
      }
      const check = await verifyTimestampToken(token, {digest, trustAnchorsPem: anchors})
      if (!check.valid) throw unavailable(`the token does not verify: ${check.error}`)
      const info = describeTimestampToken(token)
      return {token, genTime: info.genTime, tsaName: info.tsaName, serialNumber: info.serialNumber}
    },
    trustAnchorsPem: async () => anchors,
  }
}

function parseUrl(text: string): URL {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new AuditError('validation_error', `the TSA URL is not a URL: ${text}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new AuditError('validation_error', 'the TSA URL must be http or https')
  return url
}
