import {expect} from 'chai'
import {sha256} from '../../../src/core/crypto.js'
import {checkSigningCertificate, signingCertificateV2Attribute} from '../../../src/core/timestamp/ess.js'
import {createTsaMaterial, pemToDer} from '../../../src/core/timestamp/index.js'
import {asn1js, OID, pkijs, toArrayBuffer} from '../../../src/core/timestamp/pkix.js'

async function certificate(): Promise<{certificate: pkijs.Certificate; der: Uint8Array}> {
  const der = pemToDer((await createTsaMaterial()).tsaCertPem, 'CERTIFICATE')[0]!
  return {certificate: pkijs.Certificate.fromBER(toArrayBuffer(der)), der}
}

describe('core/timestamp/ess (RFC 5035 signingCertificateV2)', () => {
  let a: {certificate: pkijs.Certificate; der: Uint8Array}
  let b: {certificate: pkijs.Certificate; der: Uint8Array}

  before(async () => {
    a = await certificate()
    b = await certificate()
  })

  it('encodes ESSCertIDv2 without the default hashAlgorithm: certHash = SHA-256 of the certificate', () => {
    const attribute = signingCertificateV2Attribute(a.certificate, sha256(a.der))
    const hex = Buffer.from(attribute.toSchema().toBER(false)).toString('hex')
    // SEQUENCE { OID 1.2.840.113549.1.9.16.2.47, SET { SEQUENCE { SEQUENCE { SEQUENCE { OCTET STRING (32) ...
    expect(hex).to.match(
      /^30[0-9a-f]{2,4}060b2a864886f70d010910022f31[0-9a-f]{2}30[0-9a-f]{2}30[0-9a-f]{2}30[0-9a-f]{2}0420/,
    )
    expect(hex).to.include(sha256(a.der).toString('hex'))
  })

  it('accepts the attribute of the signer and names what is wrong otherwise', async () => {
    expect(
      await checkSigningCertificate(
        [signingCertificateV2Attribute(a.certificate, sha256(a.der))],
        a.certificate,
        a.der,
      ),
    ).to.equal('')
    expect(
      await checkSigningCertificate(
        [signingCertificateV2Attribute(a.certificate, sha256(a.der))],
        b.certificate,
        b.der,
      ),
    ).to.match(/does not match the signer certificate/)
    // Right hash, but issuerSerial names certificate A.
    expect(
      await checkSigningCertificate(
        [signingCertificateV2Attribute(a.certificate, sha256(b.der))],
        b.certificate,
        b.der,
      ),
    ).to.match(/issuer and serial .* do not match/)
    expect(await checkSigningCertificate([], a.certificate, a.der)).to.match(
      /no signingCertificate or signingCertificateV2 attribute/,
    )
    const malformed = new pkijs.Attribute({type: OID.signingCertificateV2, values: [new asn1js.Integer({value: 1})]})
    expect(await checkSigningCertificate([malformed], a.certificate, a.der)).to.match(/malformed/)
  })
})
