/**
 * The client side of the RFC 3161 protocol: the TimeStampReq sent to an external TSA (section
 * 2.4.1) and the checks section 2.4.2 asks of its TimeStampResp before the token is kept.
 */
import {TimestampError} from './errors.js'
import {asn1js, decodeDer, integerBytes, OID, pkijs, toArrayBuffer, unsignedInteger} from './pkix.js'
import {toHex} from '../hex.js'
import {parseToken} from './tstinfo.js'

/** PKIFailureInfo bit names (RFC 3161 section 2.4.2). */
const FAILURE_NAMES: Readonly<Record<number, string>> = {
  0: 'badAlg',
  2: 'badRequest',
  5: 'badDataFormat',
  14: 'timeNotAvailable',
  15: 'unacceptedPolicy',
  16: 'unacceptedExtension',
  17: 'addInfoNotAvailable',
  25: 'systemFailure',
}
const STATUS_NAMES = [
  'granted',
  'grantedWithMods',
  'rejection',
  'waiting',
  'revocationWarning',
  'revocationNotification',
]

/** A DER TimeStampReq v1 for a SHA-256 `digest`, with `nonce` and certReq. */
export function buildTimestampRequest(digest: Uint8Array, nonce: Uint8Array, certReq: boolean): Uint8Array {
  if (digest.length !== 32) throw new RangeError(`digest must be 32 bytes (SHA-256), got ${digest.length}`)
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({algorithmId: OID.sha256, algorithmParams: new asn1js.Null()}),
      hashedMessage: new asn1js.OctetString({valueHex: toArrayBuffer(digest)}),
    }),
    nonce: unsignedInteger(nonce),
    certReq,
  })
  return new Uint8Array(request.toSchema().toBER(false))
}

/**
 * Checks a DER TimeStampResp against the request and returns the DER token it carries, as sent.
 * Throws TimestampError: 'tsa_unavailable' when the TSA did not grant, 'invalid_response' when
 * the response is garbage or answers another request (imprint or nonce differ).
 */
export function parseTimestampResponse(der: Uint8Array, expect: {digest: Uint8Array; nonce: Uint8Array}): Uint8Array {
  const decoded = decodeDer(der)
  if (!(decoded instanceof asn1js.Sequence)) throw invalid('the TSA response is not a DER TimeStampResp')
  let response: pkijs.TimeStampResp
  try {
    response = new pkijs.TimeStampResp({schema: decoded})
  } catch (error) {
    throw invalid('the TSA response is not a DER TimeStampResp', error)
  }
  const status = response.status.status
  if (status !== 0 && status !== 1)
    throw new TimestampError('tsa_unavailable', `the TSA refused the request: ${describeStatus(response.status)}`)
  const tokenNode = decoded.valueBlock.value[1]
  if (!tokenNode) throw invalid('the TSA granted the request but sent no token')
  const token = tokenNode.valueBeforeDecodeView.slice()
  let parsed
  try {
    parsed = parseToken(token)
  } catch (error) {
    throw invalid(`the TSA sent an unusable token: ${(error as Error).message}`, error)
  }
  const imprint = parsed.tstInfo.messageImprint
  if (
    imprint.hashAlgorithm.algorithmId !== OID.sha256 ||
    toHex(imprint.hashedMessage.valueBlock.valueHexView) !== toHex(expect.digest)
  ) {
    throw invalid('the TSA token timestamps another message imprint than the one requested')
  }
  // Section 2.4.2: the nonce MUST equal the request's; compared as integers.
  const nonce = parsed.tstInfo.nonce
  if (!nonce || toHex(integerBytes(nonce)) !== toHex(integerBytes(unsignedInteger(expect.nonce)))) {
    throw invalid('the TSA token does not carry the nonce of the request (replayed or misrouted response)')
  }
  return token
}

/** "rejection (badAlg): <statusString>", for messages a person reads. */
function describeStatus(info: pkijs.PKIStatusInfo): string {
  const name = STATUS_NAMES[info.status] ?? `status ${info.status}`
  const failures: string[] = []
  const bits = info.failInfo?.valueBlock.valueHexView ?? new Uint8Array()
  for (const [bit, failure] of Object.entries(FAILURE_NAMES)) {
    const index = Number(bit)
    if (((bits[index >> 3] ?? 0) >> (7 - (index & 7))) & 1) failures.push(failure)
  }
  const text = (info.statusStrings ?? []).map((string) => string.valueBlock.value).join('; ')
  return `${name}${failures.length > 0 ? ` (${failures.join(', ')})` : ''}${text ? `: ${text}` : ''}`
}

function invalid(message: string, cause?: unknown): TimestampError {
  return new TimestampError('invalid_response', message, cause === undefined ? {} : {cause})
}
