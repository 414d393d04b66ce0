/**
 * Issuing a TimeStampToken (RFC 3161 section 2.4.2): a CMS SignedData (RFC 5652 section 5) whose
 * encapsulated content is a DER TSTInfo, signed by the TSA key with the signed attributes
 * contentType, messageDigest, signingTime and signingCertificateV2 (RFC 5816).
 */
import {randomBytes, sha256, webcrypto} from '../crypto.js'
import {TimestampError} from './errors.js'
import {signingCertificateV2Attribute} from './ess.js'
import type {TsaMaterial} from './material.js'
import {pemToDer} from './pem.js'
import {asn1js, bigintBytes, engine, OID, pkijs, subjectName, toArrayBuffer, unsignedInteger} from './pkix.js'
import {toHex} from '../hex.js'

export interface IssuedToken {
  /** DER TimeStampToken (a CMS ContentInfo). */
  token: Uint8Array
  genTime: Date
  /** Subject common name of the signing certificate. */
  tsaName: string
  /** TSTInfo serialNumber, lower-case hex. */
  serialNumber: string
}

export interface IssueOptions {
  nonce?: bigint | Uint8Array
  policyOid?: string
  now?: Date
  /** Include the TSA certificate in the token (RFC 3161 certReq); default true. */
  certReq?: boolean
}

/**
 * The embedded TSA's policy (RFC 3161 section 2.4.2 TSAPolicyId): a UUID-derived OID under
 * 2.25 (ITU-T X.667), which needs no registration and collides with no one's.
 */
export const EMBEDDED_POLICY_OID = '2.25.177038412993584671507454539950777402105'

interface Signer {
  certificate: pkijs.Certificate
  certificateHash: Uint8Array
  privateKey: CryptoKey
  name: string
}

const signers = new WeakMap<TsaMaterial, Promise<Signer>>()

/** Signs a token for `digest`, the 32-byte SHA-256 value to timestamp (taken as hashedMessage). */
export async function issueTimestampToken(
  material: TsaMaterial,
  digest: Uint8Array,
  options: IssueOptions = {},
): Promise<IssuedToken> {
  if (digest.length !== 32) throw new RangeError(`digest must be 32 bytes (SHA-256), got ${digest.length}`)
  const signer = await loadSigner(material)
  const genTime = options.now ?? new Date()
  // A positive 16-byte serial: unique per token without a counter to persist (RFC 3161 2.4.2).
  const serial = randomBytes(16)
  serial[0] = (serial[0]! & 0x7f) | 0x40
  const tstInfo = new pkijs.TSTInfo({
    version: 1,
    policy: options.policyOid ?? EMBEDDED_POLICY_OID,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({algorithmId: OID.sha256, algorithmParams: new asn1js.Null()}),
      hashedMessage: new asn1js.OctetString({valueHex: toArrayBuffer(digest)}),
    }),
    serialNumber: unsignedInteger(serial),
    genTime,
    ...(options.nonce === undefined
      ? {}
      : {nonce: unsignedInteger(typeof options.nonce === 'bigint' ? bigintBytes(options.nonce) : options.nonce)}),
  })
  const eContent = new Uint8Array(tstInfo.toSchema().toBER(false))
  const signedData = new pkijs.SignedData({
    version: 3, // RFC 5652 section 5.1: eContentType other than id-data
    encapContentInfo: new pkijs.EncapsulatedContentInfo({eContentType: OID.tstInfo}),
    signerInfos: [
      new pkijs.SignerInfo({
        version: 1,
        sid: new pkijs.IssuerAndSerialNumber({
          issuer: signer.certificate.issuer,
          serialNumber: signer.certificate.serialNumber,
        }),
        signedAttrs: new pkijs.SignedAndUnsignedAttributes({
          type: 0,
          attributes: signedAttributes(signer, eContent, genTime),
        }),
      }),
    ],
    ...(options.certReq === false ? {} : {certificates: [signer.certificate]}),
  })
  // Set after construction: the constructor would re-wrap it as a constructed (BER) OCTET STRING.
  signedData.encapContentInfo.eContent = new asn1js.OctetString({valueHex: toArrayBuffer(eContent)})
  await signedData.sign(signer.privateKey, 0, 'SHA-256', undefined, engine)
  const contentInfo = new pkijs.ContentInfo({contentType: OID.signedData, content: signedData.toSchema(true)})
  return {
    token: new Uint8Array(contentInfo.toSchema().toBER(false)),
    genTime,
    tsaName: signer.name,
    serialNumber: toHex(serial),
  }
}

/** The signed attributes, in DER order: a SET OF sorts its encodings (X.690 11.6). */
function signedAttributes(signer: Signer, eContent: Uint8Array, genTime: Date): pkijs.Attribute[] {
  const attributes = [
    // RFC 5652 section 11.1 and 11.2: the content type and the digest of eContent.
    new pkijs.Attribute({type: OID.contentType, values: [new asn1js.ObjectIdentifier({value: OID.tstInfo})]}),
    new pkijs.Attribute({
      type: OID.messageDigest,
      values: [new asn1js.OctetString({valueHex: toArrayBuffer(sha256(eContent))})],
    }),
    // RFC 5652 section 11.3: UTCTime for dates through 2049.
    new pkijs.Attribute({
      type: OID.signingTime,
      values: [new pkijs.Time({type: genTime.getUTCFullYear() < 2050 ? 0 : 1, value: genTime}).toSchema()],
    }),
    signingCertificateV2Attribute(signer.certificate, signer.certificateHash),
  ]
  const encoded = attributes.map((attribute) => ({attribute, der: Buffer.from(attribute.toSchema().toBER(false))}))
  return encoded.sort((a, b) => Buffer.compare(a.der, b.der)).map(({attribute}) => attribute)
}

/** Parses the TSA certificate and imports its PKCS#8 key once per material object. */
function loadSigner(material: TsaMaterial): Promise<Signer> {
  let signer = signers.get(material)
  if (!signer) {
    signer = parseSigner(material)
    signers.set(material, signer)
    signer.catch(() => signers.delete(material))
  }
  return signer
}

async function parseSigner(material: TsaMaterial): Promise<Signer> {
  try {
    const [certificateDer] = pemToDer(material.tsaCertPem, 'CERTIFICATE')
    const [keyDer] = pemToDer(material.tsaKeyPem, 'PRIVATE KEY')
    if (!certificateDer) throw new Error('tsaCertPem holds no CERTIFICATE block')
    if (!keyDer) throw new Error('tsaKeyPem holds no PKCS#8 PRIVATE KEY block')
    const certificate = pkijs.Certificate.fromBER(toArrayBuffer(certificateDer))
    const privateKey = await webcrypto.subtle.importKey('pkcs8', toArrayBuffer(keyDer), keyAlgorithm(keyDer), false, [
      'sign',
    ])
    return {certificate, certificateHash: sha256(certificateDer), privateKey, name: subjectName(certificate)}
  } catch (error) {
    throw new TimestampError(
      'tsa_unavailable',
      `cannot load the TSA certificate and key: ${(error as Error).message}`,
      {cause: error},
    )
  }
}

/** The WebCrypto signing algorithm for a PKCS#8 key: ECDSA P-256/P-384, or RSA PKCS#1 v1.5. */
function keyAlgorithm(keyDer: Uint8Array): EcKeyImportParams | RsaHashedImportParams {
  const info = pkijs.PrivateKeyInfo.fromBER(toArrayBuffer(keyDer))
  const algorithm = info.privateKeyAlgorithm
  if (algorithm.algorithmId === OID.rsaEncryption) return {name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256'}
  const curve =
    algorithm.algorithmParams instanceof asn1js.ObjectIdentifier ? algorithm.algorithmParams.valueBlock.toString() : ''
  if (algorithm.algorithmId === OID.ecPublicKey && curve === OID.p256) return {name: 'ECDSA', namedCurve: 'P-256'}
  if (algorithm.algorithmId === OID.ecPublicKey && curve === OID.p384) return {name: 'ECDSA', namedCurve: 'P-384'}
  throw new Error(`unsupported TSA key algorithm ${algorithm.algorithmId} ${curve}`.trim())
}
