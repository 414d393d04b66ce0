/**
 * The one door to pkijs and asn1js (docs/design.md, Layout). The other files of src/core/timestamp reach
 * the libraries through this module; nothing outside the folder sees their types.
 *
 * pkijs needs a WebCrypto engine: it gets the one behind src/core/crypto.ts, the only module
 * allowed to import node:crypto.
 */
import * as asn1js from 'asn1js'
import * as pkijs from 'pkijs'
import {webcrypto} from '../crypto.js'

export {asn1js, pkijs}

/** The crypto engine every pkijs call here is given explicitly (and the library default too). */
export const engine = new pkijs.CryptoEngine({name: 'audit-trail', crypto: webcrypto})
pkijs.setEngine('audit-trail', engine)

/** Object identifiers used by RFC 3161, RFC 5652, RFC 5035 and RFC 5280. */
export const OID = {
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  signedData: '1.2.840.113549.1.7.2',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  timeStamping: '1.3.6.1.5.5.7.3.8',
  ecPublicKey: '1.2.840.10045.2.1',
  p256: '1.2.840.10045.3.1.7',
  p384: '1.3.132.0.34',
  rsaEncryption: '1.2.840.113549.1.1.1',
} as const

/**
 * A copy of exactly these bytes as an ArrayBuffer, the type pkijs and asn1js take. (A Buffer's
 * own `.buffer` may be a shared pool, and Buffer#slice does not copy.)
 */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return new Uint8Array(bytes).buffer
}

/**
 * A non-negative INTEGER from unsigned big-endian bytes, minimally encoded (X.690 8.3.2): leading
 * zero bytes dropped, one added back when the top bit would otherwise make the value negative.
 */
export function unsignedInteger(bytes: Uint8Array): asn1js.Integer {
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0) start++
  let body = bytes.length === 0 ? Uint8Array.of(0) : bytes.subarray(start)
  if (body[0]! >= 0x80) body = Uint8Array.of(0, ...body)
  return new asn1js.Integer({valueHex: toArrayBuffer(body)})
}

/** The magnitude of an INTEGER as unsigned big-endian bytes without leading zeros. */
export function integerBytes(integer: asn1js.Integer): Uint8Array {
  const bytes = integer.valueBlock.valueHexView
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0) start++
  return bytes.slice(start)
}

/** Unsigned big-endian bytes of a non-negative bigint. */
export function bigintBytes(value: bigint): Uint8Array {
  if (value < 0n) throw new RangeError('nonce must be a non-negative integer')
  const hex = value.toString(16)
  return new Uint8Array(Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex'))
}

/** Decodes one ASN.1 value that spans all of `der`; garbage or trailing bytes give `undefined`. */
export function decodeDer(der: Uint8Array): asn1js.AsnType | undefined {
  const decoded = asn1js.fromBER(toArrayBuffer(der))
  return decoded.offset === der.length ? decoded.result : undefined
}

/**
 * The subject common name, the name docs/api.md reports as `tsa`; a subject without
 * one is shown whole ("O=Example, C=DE") so that the field is never empty for a real certificate.
 */
export function subjectName(certificate: pkijs.Certificate): string {
  const attributes = certificate.subject.typesAndValues
  const cn = attributes.find((attribute) => attribute.type === OID.commonName)
  if (cn) return String(cn.value.valueBlock.value)
  return attributes.map((attribute) => `${attribute.type}=${String(attribute.value.valueBlock.value)}`).join(', ')
}
