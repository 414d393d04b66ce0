import {expect} from 'chai'
import fc from 'fast-check'
import {derToPem, pemToDer, splitCertificates} from '../../../src/core/timestamp/index.js'

describe('core/timestamp/pem (RFC 7468)', () => {
  it('armours DER in 64-character base64 lines between BEGIN and END', () => {
    // printf '\x30\x03\x02\x01\x01' | base64  ->  MAMCAQE=
    expect(derToPem(Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x01), 'TEST')).to.equal(
      '-----BEGIN TEST-----\nMAMCAQE=\n-----END TEST-----\n',
    )
    const long = derToPem(new Uint8Array(100), 'CERTIFICATE').split('\n')
    // 100 bytes are 136 base64 characters: lines of 64, 64 and 8.
    expect(long.slice(1, -2).map((line) => line.length)).to.deep.equal([64, 64, 8])
  })

  it('round-trips any bytes and any label (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({maxLength: 400}),
        fc.constantFrom('CERTIFICATE', 'PRIVATE KEY', 'X509 CRL'),
        (der, label) => {
          const blocks = pemToDer(derToPem(der, label), label)
          expect(blocks).to.have.length(1)
          expect(Buffer.from(blocks[0]!).equals(Buffer.from(der))).to.equal(true)
        },
      ),
    )
  })

  it('reads every block of a bundle in order, skipping text around them and other labels', () => {
    const bundle =
      `subject=CN = one\n${derToPem(Uint8Array.of(1), 'CERTIFICATE')}` +
      `junk\n${derToPem(Uint8Array.of(2), 'PRIVATE KEY')}` +
      `${derToPem(Uint8Array.of(3), 'CERTIFICATE').replace(/\n/g, '\r\n')}`
    expect(pemToDer(bundle, 'CERTIFICATE').map((der) => [...der])).to.deep.equal([[1], [3]])
    expect(pemToDer(bundle).map((der) => [...der])).to.deep.equal([[1], [2], [3]])
    expect(splitCertificates([bundle, derToPem(Uint8Array.of(4), 'CERTIFICATE')])).to.deep.equal(
      [1, 3, 4].map((b) => derToPem(Uint8Array.of(b), 'CERTIFICATE')),
    )
  })

  it('finds nothing in text without PEM, and refuses a block that is not base64', () => {
    expect(pemToDer('not a certificate')).to.deep.equal([])
    expect(() => pemToDer('-----BEGIN CERTIFICATE-----\nMA*C\n-----END CERTIFICATE-----\n')).to.throw(/not base64/)
    // BEGIN and END labels must agree.
    expect(pemToDer('-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END PRIVATE KEY-----\n')).to.deep.equal([])
  })
})
