/**
 * The ESS signing-certificate attribute (RFC 2634 section 5.4, RFC 5035 section 3, RFC 5816).
 * RFC 3161 section 2.4.1 requires it: it binds the TSA certificate itself into the signed
 * attributes, so that a token cannot be re-attributed to another certificate with the same key.
 */
import {webcrypto} from '../crypto.js'
import {asn1js, OID, pkijs, toArrayBuffer} from './pkix.js'

const HASH_NAMES: Readonly<Record<string, string>> = {
  [OID.sha1]: 'SHA-1',
  [OID.sha256]: 'SHA-256',
  [OID.sha384]: 'SHA-384',
  [OID.sha512]: 'SHA-512',
}

/**
 * SigningCertificateV2 with one ESSCertIDv2 { certHash = SHA-256(certificate DER), issuerSerial }.
 * hashAlgorithm is left out because SHA-256 is its DEFAULT and DER omits defaults (X.690 11.5).
 */
export function signingCertificateV2Attribute(
  certificate: pkijs.Certificate,
  certificateHash: Uint8Array,
): pkijs.Attribute {
  const issuerSerial = new asn1js.Sequence({
    value: [
      new asn1js.Sequence({value: [new pkijs.GeneralName({type: 4, value: certificate.issuer}).toSchema()]}),
      certificate.serialNumber,
    ],
  })
  const essCertIdV2 = new asn1js.Sequence({
    value: [new asn1js.OctetString({valueHex: toArrayBuffer(certificateHash)}), issuerSerial],
  })
  const signingCertificateV2 = new asn1js.Sequence({value: [new asn1js.Sequence({value: [essCertIdV2]})]})
  return new pkijs.Attribute({type: OID.signingCertificateV2, values: [signingCertificateV2]})
}

/**
 * Checks that the first ESSCertID(v2) of the signed attributes names `signer` (RFC 5035 section
 * 5.4.1): hash of its DER and, when present, issuer and serial. Returns '' or what is wrong.
 */
export async function checkSigningCertificate(
  attributes: pkijs.Attribute[],
  signer: pkijs.Certificate,
  signerDer: Uint8Array,
): Promise<string> {
  const v2 = attributes.find((attribute) => attribute.type === OID.signingCertificateV2)
  const v1 = attributes.find((attribute) => attribute.type === OID.signingCertificate)
  const attribute = v2 ?? v1
  if (!attribute)
    return 'the token has no signingCertificate or signingCertificateV2 attribute (RFC 3161 section 2.4.1)'
  try {
    const certs = children(attribute.values[0])[0]
    const fields = children(children(certs)[0])
    // ESSCertIDv2 may start with a hashAlgorithm; ESSCertID (v1) is always SHA-1.
    let hashOid: string = v2 ? OID.sha256 : OID.sha1
    if (v2 && fields[0] instanceof asn1js.Sequence)
      hashOid = new pkijs.AlgorithmIdentifier({schema: fields.shift()}).algorithmId
    const hashName = HASH_NAMES[hashOid]
    if (!hashName) return `unsupported hash algorithm ${hashOid} in the signing certificate attribute`
    const expected = new Uint8Array(await webcrypto.subtle.digest(hashName, toArrayBuffer(signerDer)))
    const certHash = fields[0]
    if (!(certHash instanceof asn1js.OctetString) || !sameBytes(certHash.valueBlock.valueHexView, expected)) {
      return 'the signing certificate attribute does not match the signer certificate'
    }
    if (fields[1] !== undefined && !matchesIssuerSerial(fields[1], signer)) {
      return 'the issuer and serial in the signing certificate attribute do not match the signer certificate'
    }
    return ''
  } catch {
    return 'the signing certificate attribute is malformed'
  }
}

/** IssuerSerial ::= SEQUENCE { issuer GeneralNames, serialNumber } (RFC 5035 section 4). */
function matchesIssuerSerial(issuerSerial: asn1js.AsnType, signer: pkijs.Certificate): boolean {
  const [names, serial] = children(issuerSerial)
  if (!(serial instanceof asn1js.Integer) || !serial.isEqual(signer.serialNumber)) return false
  return children(names).some((name) => {
    const generalName = new pkijs.GeneralName({schema: name})
    return generalName.type === 4 && signer.issuer.isEqual(generalName.value as pkijs.RelativeDistinguishedNames)
  })
}

function children(node: asn1js.AsnType | undefined): asn1js.AsnType[] {
  if (!(node instanceof asn1js.Sequence)) throw new Error('expected a SEQUENCE')
  return [...node.valueBlock.value]
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i])
}
