/**
 * The embedded TSA's certificates: a local root CA and the TSA certificate it issued, shaped as
 * RFC 3161 section 2.3 and OpenSSL's timestamp-signing purpose require.
 *
 * Keys are ECDSA P-256 with SHA-256: OpenSSL 3.0 verifies such tokens, signing is fast, and
 * keys are generated at once (RSA-2048 keys are slow to generate and give larger tokens).
 */
import {randomBytes, sha256, webcrypto} from '../crypto.js'
import {derToPem} from './pem.js'
import {asn1js, engine, OID, pkijs, toArrayBuffer, unsignedInteger} from './pkix.js'

export interface TsaMaterial {
  caCertPem: string
  tsaCertPem: string
  /** PKCS#8 PEM ("PRIVATE KEY"). */
  tsaKeyPem: string
  /** PKCS#8 PEM of the CA key; absent once the holder chose to discard it. */
  caKeyPem?: string
}

const KEY_ALGORITHM = {name: 'ECDSA', namedCurve: 'P-256'} as const
const VALIDITY_YEARS = 10

/** Creates a root CA (CA:TRUE, keyCertSign) and a TSA certificate issued by it. */
export async function createTsaMaterial(options: {commonName?: string; now?: Date} = {}): Promise<TsaMaterial> {
  const now = options.now ?? new Date()
  const commonName = options.commonName ?? 'audit-trail embedded TSA'
  const caKeys = await generateKeyPair()
  const tsaKeys = await generateKeyPair()
  const caName = `${commonName} root CA`
  const caKeyId = await keyIdentifier(caKeys.publicKey)
  const ca = await issueCertificate({
    subject: caName,
    issuer: caName,
    publicKey: caKeys.publicKey,
    signingKey: caKeys.privateKey,
    now,
    // RFC 5280 section 4.2.1.9 and 4.2.1.3: a CA that signs certificates.
    extensions: [
      extension(OID.basicConstraints, true, new pkijs.BasicConstraints({cA: true}).toSchema()),
      extension(OID.keyUsage, true, keyUsage(0x06, 1)), // keyCertSign | cRLSign
      extension(OID.subjectKeyIdentifier, false, new asn1js.OctetString({valueHex: toArrayBuffer(caKeyId)})),
    ],
  })
  const tsa = await issueCertificate({
    subject: commonName,
    issuer: caName,
    publicKey: tsaKeys.publicKey,
    signingKey: caKeys.privateKey,
    now,
    // RFC 3161 section 2.3: the only extended key usage is id-kp-timeStamping, and it is critical.
    extensions: [
      extension(OID.keyUsage, true, keyUsage(0x80, 7)), // digitalSignature
      extension(OID.extKeyUsage, true, new pkijs.ExtKeyUsage({keyPurposes: [OID.timeStamping]}).toSchema()),
      extension(
        OID.subjectKeyIdentifier,
        false,
        new asn1js.OctetString({valueHex: toArrayBuffer(await keyIdentifier(tsaKeys.publicKey))}),
      ),
      extension(
        OID.authorityKeyIdentifier,
        false,
        new pkijs.AuthorityKeyIdentifier({
          keyIdentifier: new asn1js.OctetString({valueHex: toArrayBuffer(caKeyId)}),
        }).toSchema(),
      ),
    ],
  })
  return {
    caCertPem: derToPem(ca, 'CERTIFICATE'),
    tsaCertPem: derToPem(tsa, 'CERTIFICATE'),
    tsaKeyPem: await exportPrivateKey(tsaKeys.privateKey),
    caKeyPem: await exportPrivateKey(caKeys.privateKey),
  }
}

async function generateKeyPair(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])
}

async function exportPrivateKey(key: CryptoKey): Promise<string> {
  return derToPem(new Uint8Array(await webcrypto.subtle.exportKey('pkcs8', key)), 'PRIVATE KEY')
}

/** RFC 7093 section 2 method 1: the leftmost 160 bits of SHA-256 of the subjectPublicKey bits. */
async function keyIdentifier(publicKey: CryptoKey): Promise<Uint8Array> {
  const spki = pkijs.PublicKeyInfo.fromBER(await webcrypto.subtle.exportKey('spki', publicKey))
  return sha256(spki.subjectPublicKey.valueBlock.valueHexView).subarray(0, 20)
}

/** KeyUsage is a named BIT STRING; DER drops trailing zero bits (X.690 11.2.2). */
function keyUsage(firstByte: number, unusedBits: number): asn1js.BitString {
  return new asn1js.BitString({valueHex: toArrayBuffer(Uint8Array.of(firstByte)), unusedBits})
}

function extension(extnID: string, critical: boolean, value: asn1js.AsnType): pkijs.Extension {
  return new pkijs.Extension({extnID, critical, extnValue: value.toBER(false)})
}

interface CertificateRequest {
  subject: string
  issuer: string
  publicKey: CryptoKey
  signingKey: CryptoKey
  now: Date
  extensions: pkijs.Extension[]
}

async function issueCertificate(request: CertificateRequest): Promise<Uint8Array> {
  const certificate = new pkijs.Certificate()
  certificate.version = 2 // v3, needed for extensions (RFC 5280 section 4.1.2.1)
  // A positive 16-byte serial with the top bit clear and the next one set: minimal and unpredictable.
  const serial = randomBytes(16)
  serial[0] = (serial[0]! & 0x7f) | 0x40
  certificate.serialNumber = unsignedInteger(serial)
  certificate.subject.typesAndValues.push(commonNameAttribute(request.subject))
  certificate.issuer.typesAndValues.push(commonNameAttribute(request.issuer))
  const notBefore = new Date(Math.floor(request.now.getTime() / 1000) * 1000)
  const notAfter = new Date(notBefore)
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + VALIDITY_YEARS)
  certificate.notBefore = validityTime(notBefore)
  certificate.notAfter = validityTime(notAfter)
  await certificate.subjectPublicKeyInfo.importKey(request.publicKey, engine)
  certificate.extensions = request.extensions
  await certificate.sign(request.signingKey, 'SHA-256', engine)
  return new Uint8Array(certificate.toSchema(true).toBER(false))
}

/** RFC 5280 section 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050. */
function validityTime(value: Date): pkijs.Time {
  return new pkijs.Time({type: value.getUTCFullYear() < 2050 ? 0 : 1, value})
}

function commonNameAttribute(value: string): pkijs.AttributeTypeAndValue {
  return new pkijs.AttributeTypeAndValue({type: OID.commonName, value: new asn1js.Utf8String({value})})
}
