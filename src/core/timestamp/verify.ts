/**
 * Verifying a TimeStampToken the way RFC 3161 section 2.4.2 and `openssl ts -verify` do:
 * the imprint is the expected digest, the CMS signature holds (RFC 5652 section 5.6), the ESS
 * attribute names the signer, the signer is a timestamping certificate (RFC 3161 section 2.3)
 * and it chains to a trust anchor. Never throws for bad input: the answer carries the reason.
 */
import {sha256, webcrypto} from '../crypto.js'
import {checkSigningCertificate} from './ess.js'
import {pemToDer} from './pem.js'
import {asn1js, decodeDer, engine, OID, pkijs, toArrayBuffer} from './pkix.js'
import {toHex} from '../hex.js'
import {describe, parseToken, type ParsedToken} from './tstinfo.js'

export interface TokenVerification {
  valid: boolean
  /** '' when valid; otherwise the first check that failed, in words. */
  error: string
  /** genTime, ISO 8601 UTC with milliseconds (when the token could be read). */
  genTime?: string
  tsaName?: string
  /** The token's hashedMessage, lower-case hex. */
  digestHex?: string
}

const DIGEST_NAMES: Readonly<Record<string, string>> = {
  [OID.sha256]: 'SHA-256',
  [OID.sha384]: 'SHA-384',
  [OID.sha512]: 'SHA-512',
}

/**
 * The time and signer shown beside a token (a stored timestamp record, a package's timestamp
 * member) are unsigned text: the first of them that differs from what the verified token signed,
 * or undefined. A reader must be shown the token's time and signer, never an edited copy.
 */
export function unsignedFieldMismatch(
  claimed: {timestamp: string; tsa: string},
  check: TokenVerification,
): {field: 'timestamp' | 'tsa'; signed: string; claimed: string} | undefined {
  if (check.genTime !== undefined && Date.parse(check.genTime) !== Date.parse(claimed.timestamp)) {
    return {field: 'timestamp', signed: check.genTime, claimed: claimed.timestamp}
  }
  if (check.tsaName !== undefined && check.tsaName !== claimed.tsa)
    return {field: 'tsa', signed: check.tsaName, claimed: claimed.tsa}
  return undefined
}

export async function verifyTimestampToken(
  token: Uint8Array,
  options: {digest: Uint8Array; trustAnchorsPem: string[]},
): Promise<TokenVerification> {
  let parsed: ParsedToken
  try {
    parsed = parseToken(token)
  } catch (error) {
    return {valid: false, error: (error as Error).message}
  }
  const info = describe(parsed)
  const facts = {genTime: info.genTime.toISOString(), tsaName: info.tsaName, digestHex: info.digestHex}
  let error: string
  try {
    error = await findProblem(parsed, options)
  } catch (cause) {
    error = `the token could not be checked: ${(cause as Error).message}`
  }
  return {valid: error === '', error, ...facts}
}

/** Returns '' when every check passes, else the first failure. */
async function findProblem(
  parsed: ParsedToken,
  options: {digest: Uint8Array; trustAnchorsPem: string[]},
): Promise<string> {
  const imprint = parsed.tstInfo.messageImprint
  if (imprint.hashAlgorithm.algorithmId !== OID.sha256)
    return `the message imprint uses ${imprint.hashAlgorithm.algorithmId}, not SHA-256`
  const actual = toHex(imprint.hashedMessage.valueBlock.valueHexView)
  if (actual !== toHex(options.digest))
    return `message imprint mismatch: the token timestamps ${actual}, expected ${toHex(options.digest)}`
  if (!parsed.signer) return 'the token does not include the TSA certificate (request it with certReq)'
  const signatureProblem = await checkSignature(parsed)
  if (signatureProblem) return signatureProblem
  const signerInfo = parsed.signedData.signerInfos[0]!
  const essProblem = await checkSigningCertificate(
    signerInfo.signedAttrs!.attributes,
    parsed.signer.certificate,
    parsed.signer.der,
  )
  if (essProblem) return essProblem
  const usageProblem = checkTimestampingUsage(parsed.signer.certificate)
  if (usageProblem) return usageProblem
  return checkChain(parsed, options.trustAnchorsPem)
}

/** RFC 5652 sections 5.4 and 11: contentType and messageDigest attributes, then the signature. */
async function checkSignature(parsed: ParsedToken): Promise<string> {
  const signerInfo = parsed.signedData.signerInfos[0]!
  const attributes = signerInfo.signedAttrs?.attributes
  if (!attributes) return 'the token has no signed attributes (RFC 3161 requires the signingCertificate attribute)'
  const contentType = attributes.find((attribute) => attribute.type === OID.contentType)?.values[0]
  if (!(contentType instanceof asn1js.ObjectIdentifier) || contentType.valueBlock.toString() !== OID.tstInfo) {
    return 'the contentType attribute is missing or is not id-ct-TSTInfo'
  }
  const digestName = DIGEST_NAMES[signerInfo.digestAlgorithm.algorithmId]
  if (!digestName) return `unsupported digest algorithm ${signerInfo.digestAlgorithm.algorithmId}`
  const messageDigest = attributes.find((attribute) => attribute.type === OID.messageDigest)?.values[0]
  const expected =
    digestName === 'SHA-256'
      ? sha256(parsed.eContent)
      : new Uint8Array(await webcrypto.subtle.digest(digestName, toArrayBuffer(parsed.eContent)))
  if (
    !(messageDigest instanceof asn1js.OctetString) ||
    toHex(messageDigest.valueBlock.valueHexView) !== toHex(expected)
  ) {
    return 'the messageDigest attribute does not match the TSTInfo (the token was altered)'
  }
  // An ECDSA signature is a DER SEQUENCE of two INTEGERs (RFC 5753 section 7.2). asn1js also reads
  // lax encodings (a wrong length byte, trailing bytes); OpenSSL does not, and neither do we.
  if (signerInfo.signatureAlgorithm.algorithmId.startsWith('1.2.840.10045.4.')) {
    const signature = signerInfo.signature.valueBlock.valueHexView
    const decoded = decodeDer(signature)
    if (!decoded || toHex(decoded.toBER()) !== toHex(signature))
      return 'the signature is not a DER-encoded ECDSA signature (the token was altered)'
  }
  // RSA PKCS#1 v1.5 SignerInfos name only rsaEncryption; the hash comes from digestAlgorithm.
  const hashForRsa = signerInfo.signatureAlgorithm.algorithmId === OID.rsaEncryption ? digestName : undefined
  const verified = await engine
    .verifyWithPublicKey(
      signerInfo.signedAttrs!.encodedValue,
      signerInfo.signature,
      parsed.signer!.certificate.subjectPublicKeyInfo,
      signerInfo.signatureAlgorithm,
      hashForRsa,
    )
    .catch(() => false)
  return verified
    ? ''
    : 'the signature does not verify with the TSA certificate (the token was altered or signed by another key)'
}

/**
 * RFC 3161 section 2.3: one critical extendedKeyUsage holding only id-kp-timeStamping; like
 * OpenSSL, a keyUsage (if present) allows only digitalSignature and nonRepudiation.
 */
function checkTimestampingUsage(certificate: pkijs.Certificate): string {
  const extensions = certificate.extensions ?? []
  const eku = extensions.filter((extension) => extension.extnID === OID.extKeyUsage)
  const purposes =
    eku.length === 1 && eku[0]!.parsedValue instanceof pkijs.ExtKeyUsage ? eku[0]!.parsedValue.keyPurposes : []
  if (purposes.length !== 1 || purposes[0] !== OID.timeStamping)
    return 'the signer certificate is not for timestamping: its extended key usage must be timeStamping only'
  if (!eku[0]!.critical)
    return 'the signer certificate has a non-critical extended key usage; RFC 3161 requires it critical'
  const keyUsage = extensions.find((extension) => extension.extnID === OID.keyUsage)?.parsedValue
  if (keyUsage instanceof asn1js.BitString) {
    const bits = keyUsage.valueBlock.valueHexView
    if ((bits[0]! & 0xc0) === 0 || (bits[0]! & 0x3f) !== 0 || (bits[1] ?? 0) !== 0)
      return 'the signer certificate key usage is not digitalSignature/nonRepudiation'
  }
  return ''
}

/** RFC 5280 path validation to one of the trust anchors, at genTime (when the token was made). */
async function checkChain(parsed: ParsedToken, trustAnchorsPem: string[]): Promise<string> {
  let anchors: Anchor[]
  try {
    anchors = trustAnchorsPem.flatMap((pem) => pemToDer(pem, 'CERTIFICATE')).map(readAnchor)
  } catch {
    return 'a trust anchor is not a readable PEM certificate'
  }
  if (anchors.length === 0) return 'no trust anchor was given to check the TSA certificate against'
  const signer = parsed.signer!.certificate
  const genTime = parsed.tstInfo.genTime
  const signerHex = toHex(parsed.signer!.der)
  if (anchors.some((anchor) => anchor.derHex === signerHex)) {
    // The TSA certificate itself is trusted: only its validity period remains to check.
    const inValidity = signer.notBefore.value <= genTime && genTime <= signer.notAfter.value
    return inValidity ? '' : 'the TSA certificate was not valid at genTime'
  }
  const intermediates = (parsed.signedData.certificates ?? []).filter(
    (item): item is pkijs.Certificate => item instanceof pkijs.Certificate && item !== signer,
  )
  // The engine takes the last certificate of `certs` as the one to validate.
  const chain = new pkijs.CertificateChainValidationEngine({
    trustedCerts: anchors.map((anchor) => anchor.certificate),
    certs: [...intermediates, signer],
    checkDate: genTime,
  })
  const result = await chain.verify({}, engine)
  return result.result ? '' : `the TSA certificate does not chain to a trust anchor: ${result.resultMessage}`
}

interface Anchor {
  certificate: pkijs.Certificate
  derHex: string
}

/** Parsed trust anchors by DER: the same few anchors serve every verification. */
const anchorCache = new Map<string, Anchor>()
const ANCHOR_CACHE_LIMIT = 64

function readAnchor(der: Uint8Array): Anchor {
  const derHex = toHex(der)
  let anchor = anchorCache.get(derHex)
  if (!anchor) {
    anchor = {certificate: pkijs.Certificate.fromBER(toArrayBuffer(der)), derHex}
    if (anchorCache.size >= ANCHOR_CACHE_LIMIT) anchorCache.clear()
    anchorCache.set(derHex, anchor)
  }
  return anchor
}
