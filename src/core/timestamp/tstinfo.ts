/**
 * Reading a TimeStampToken (RFC 3161 section 2.4.2): a ContentInfo holding a SignedData whose
 * encapsulated content is a DER TSTInfo. Structure only; verify.ts decides whether it holds.
 */
import {TimestampError} from './errors.js'
import {asn1js, decodeDer, integerBytes, OID, pkijs, subjectName} from './pkix.js'
import {toHex} from '../hex.js'

/** What a token says, in plain values (no pkijs types leave the folder). */
export interface TokenInfo {
  genTime: Date
  /** Subject common name of the signing certificate; '' when the token carries no certificate. */
  tsaName: string
  /** TSTInfo serialNumber, lower-case hex. */
  serialNumber: string
  policyOid: string
  hashAlgorithmOid: string
  /** messageImprint.hashedMessage, lower-case hex. */
  digestHex: string
  /** Lower-case hex of the nonce, when the token has one. */
  nonceHex?: string
}

export interface ParsedToken {
  signedData: pkijs.SignedData
  tstInfo: pkijs.TSTInfo
  eContent: Uint8Array
  signer?: {certificate: pkijs.Certificate; der: Uint8Array}
}

/** Parses a DER TimeStampToken; throws TimestampError('invalid_token') naming what is wrong. */
export function parseToken(der: Uint8Array): ParsedToken {
  const contentInfo = attempt(
    'the token is not a DER CMS ContentInfo',
    () => new pkijs.ContentInfo({schema: strictDer(der)}),
  )
  if (contentInfo.contentType !== OID.signedData)
    throw invalid(`the token content type is ${contentInfo.contentType}, not signedData`)
  const signedData = attempt(
    'the token does not hold a CMS SignedData',
    () => new pkijs.SignedData({schema: contentInfo.content}),
  )
  const certificateBytes = attempt('the token certificates are malformed', () =>
    encodedCertificates(contentInfo.content),
  )
  const encap = signedData.encapContentInfo
  if (encap.eContentType !== OID.tstInfo || !encap.eContent)
    throw invalid('the token does not encapsulate a TSTInfo (id-ct-TSTInfo)')
  const eContent = new Uint8Array(encap.eContent.getValue())
  const tstInfo = attempt('the TSTInfo is not valid DER', () => new pkijs.TSTInfo({schema: strictDer(eContent)}))
  if (tstInfo.version !== 1) throw invalid(`the TSTInfo version is ${tstInfo.version}, not 1`)
  // RFC 3161 section 2.4.2: no signature other than the TSA's.
  if (signedData.signerInfos.length !== 1)
    throw invalid(`the token has ${signedData.signerInfos.length} signers, not 1`)
  const signer = findSigner(signedData, signedData.signerInfos[0]!, certificateBytes)
  return signer ? {signedData, tstInfo, eContent, signer} : {signedData, tstInfo, eContent}
}

/** The facts of a token without checking them; throws TimestampError('invalid_token'). */
export function describeTimestampToken(der: Uint8Array): TokenInfo {
  return describe(parseToken(der))
}

export function describe(parsed: ParsedToken): TokenInfo {
  const {tstInfo} = parsed
  const info: TokenInfo = {
    genTime: tstInfo.genTime,
    tsaName: parsed.signer ? subjectName(parsed.signer.certificate) : '',
    serialNumber: toHex(integerBytes(tstInfo.serialNumber)),
    policyOid: tstInfo.policy,
    hashAlgorithmOid: tstInfo.messageImprint.hashAlgorithm.algorithmId,
    digestHex: toHex(tstInfo.messageImprint.hashedMessage.valueBlock.valueHexView),
  }
  if (tstInfo.nonce) info.nonceHex = toHex(integerBytes(tstInfo.nonce))
  return info
}

/** RFC 5652 section 5.3: the signer is named by issuer and serial, or by subject key identifier. */
function findSigner(
  signedData: pkijs.SignedData,
  signerInfo: pkijs.SignerInfo,
  certificateBytes: Uint8Array[],
): ParsedToken['signer'] {
  const sid = signerInfo.sid
  const index = (signedData.certificates ?? []).findIndex((candidate) => {
    if (!(candidate instanceof pkijs.Certificate)) return false
    if (sid instanceof pkijs.IssuerAndSerialNumber) {
      return candidate.issuer.isEqual(sid.issuer) && candidate.serialNumber.isEqual(sid.serialNumber)
    }
    // [0] SubjectKeyIdentifier, as pkijs decodes it: constructed or primitive.
    const wanted = sid.idBlock.isConstructed
      ? (sid.valueBlock.value[0] as asn1js.OctetString).valueBlock.valueHexView
      : sid.valueBlock.valueHexView
    const keyId = subjectKeyIdentifier(candidate)
    return keyId !== undefined && toHex(keyId) === toHex(wanted)
  })
  if (index < 0) return undefined
  return {certificate: signedData.certificates![index] as pkijs.Certificate, der: certificateBytes[index]!}
}

/**
 * The certificates of a SignedData exactly as encoded (the ESS hash is over these bytes): the
 * elements of `certificates [0] IMPLICIT CertificateSet` (RFC 5652 section 5.1).
 */
function encodedCertificates(signedData: asn1js.AsnType): Uint8Array[] {
  const fields = (signedData as asn1js.Sequence).valueBlock.value
  const set = fields.find((field) => field.idBlock.tagClass === 3 && field.idBlock.tagNumber === 0) as
    asn1js.Constructed | undefined
  return set ? set.valueBlock.value.map((certificate) => certificate.valueBeforeDecodeView) : []
}

function subjectKeyIdentifier(certificate: pkijs.Certificate): Uint8Array | undefined {
  const extension = certificate.extensions?.find((candidate) => candidate.extnID === OID.subjectKeyIdentifier)
  return extension ? extension.parsedValue?.valueBlock?.valueHexView : undefined
}

function strictDer(der: Uint8Array): asn1js.AsnType {
  const decoded = decodeDer(der)
  if (!decoded) throw new Error('not a single DER value')
  return decoded
}

function attempt<T>(message: string, parse: () => T): T {
  try {
    return parse()
  } catch (error) {
    throw invalid(message, error)
  }
}

function invalid(message: string, cause?: unknown): TimestampError {
  return new TimestampError('invalid_token', message, cause === undefined ? {} : {cause})
}
