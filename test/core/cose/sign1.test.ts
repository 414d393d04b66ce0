import {expect} from 'chai'
import {ed25519FromSeed, jwkVerifier, type SigningJwk} from '../../../src/core/crypto.js'
import {
  ALG,
  CoseError,
  decodeSign1,
  encodeSign1,
  HEADER,
  sigStructure,
  signSign1,
  verifySign1,
} from '../../../src/core/cose/index.js'

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex')
const CONTENT = Buffer.from('This is the content.')

/**
 * Known answers from the COSE working group's examples (github.com/cose-wg/Examples):
 * eddsa-examples/eddsa-sig-01.json, Ed25519 with the key of RFC 8032 section 7.1 test 1, whose
 * signatures are deterministic, so the whole COSE_Sign1 is fixed byte for byte.
 */
const EDDSA_01 = {
  seed: hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60'),
  toBeSigned: hex('846A5369676E61747572653145A2012703004054546869732069732074686520636F6E74656E742E'),
  cose: hex(
    'D28445A201270300A10442313154546869732069732074686520636F6E74656E742E58407142FD2FF96D56DB85BEE905A76B' +
      'A1D0B7321A95C8C4D3607C5781932B7AFB8711497DFA751BF40B58B3BCC32300B1487F3DB34085EEF013BF08F4A44D6FEF0D',
  ),
}

/** RFC 9052 appendix C.2.1 (RFC 8152's, unchanged): a COSE_Sign1 with ES256 by key "11" (P-256). */
const RFC9052_C_2_1 = {
  jwk: {
    kty: 'EC',
    crv: 'P-256',
    x: 'usWxHK2PmfnHKwXPS54m0kTcGJ90UiglWiGahtagnv8',
    y: 'IBOL-C3BttVivg-lSreASjpkttcsz-1rb7btKLv8EX4',
  },
  toBeSigned: hex('846A5369676E61747572653143A101264054546869732069732074686520636F6E74656E742E'),
  cose: hex(
    'D28443A10126A10442313154546869732069732074686520636F6E74656E742E58408EB33E4CA31D1C465AB05AAC34CC6B23' +
      'D58FEF5C083106C4D25A91AEF0B0117E2AF9A291AA32E14AB834DC56ED2A223444547E01F11D3B0916E5A4C345CACB36',
  ),
}

describe('COSE_Sign1 (RFC 9052)', () => {
  it('builds the Sig_structure of section 4.4 byte for byte', () => {
    // ["Signature1", h'A10126', h'', h'546869...'] as the RFC's ToBeSign intermediate.
    expect(Buffer.from(sigStructure(hex('A10126'), CONTENT))).to.deep.equal(RFC9052_C_2_1.toBeSigned)
  })

  it('signs the EdDSA example of the COSE working group byte for byte', () => {
    const key = ed25519FromSeed(EDDSA_01.seed)
    const seen: Buffer[] = []
    const cose = signSign1(
      {
        protectedHeader: new Map([
          [HEADER.alg, ALG.EdDSA],
          [HEADER.contentType, 0],
        ]),
        unprotectedHeader: new Map([[HEADER.kid, Buffer.from('11')]]),
        payload: CONTENT,
      },
      (toBeSigned) => {
        seen.push(Buffer.from(toBeSigned))
        return key.sign(toBeSigned)
      },
    )
    expect(seen).to.deep.equal([EDDSA_01.toBeSigned])
    expect(Buffer.from(cose).toString('hex')).to.equal(EDDSA_01.cose.toString('hex'))
  })

  it('verifies the ES256 example of RFC 9052 appendix C.2.1 and refuses it altered', () => {
    const sign1 = decodeSign1(RFC9052_C_2_1.cose)
    expect(sign1.protectedHeader.get(HEADER.alg)).to.equal(ALG.ES256)
    expect(Buffer.from(sign1.unprotectedHeader.get(HEADER.kid) as Uint8Array).toString()).to.equal('11')
    const verify = jwkVerifier(RFC9052_C_2_1.jwk as SigningJwk)
    expect(verifySign1(sign1, verify)).to.equal(true)
    expect(verifySign1({...sign1, payload: Buffer.from('This is the content!')}, verify)).to.equal(false)
    const signature = Buffer.from(sign1.signature)
    signature[10]! ^= 0x01
    expect(verifySign1({...sign1, signature}, verify)).to.equal(false)
    // Decoding and encoding again gives back the example's bytes.
    expect(Buffer.from(encodeSign1(sign1))).to.deep.equal(RFC9052_C_2_1.cose)
  })

  it('verifies a detached payload given apart, and only then', () => {
    const key = ed25519FromSeed(EDDSA_01.seed)
    const cose = signSign1(
      {protectedHeader: new Map([[HEADER.alg, ALG.EdDSA]]), payload: CONTENT, detached: true},
      key.sign,
    )
    const sign1 = decodeSign1(cose)
    expect(sign1.payload).to.equal(null)
    const verify = jwkVerifier({kty: 'OKP', crv: 'Ed25519', x: key.publicKey.toString('base64url')})
    expect(verifySign1(sign1, verify, CONTENT)).to.equal(true)
    expect(verifySign1(sign1, verify, Buffer.from('another content'))).to.equal(false)
    expect(() => verifySign1(sign1, verify)).to.throw(CoseError, /detached/)
  })

  const malformed: Array<[string, string, RegExp]> = [
    ['empty input', '', /empty/],
    ['not CBOR (truncated)', 'd28443a1', /not well-formed CBOR/],
    ['bytes after the item', 'd28440a0f6400000', /Extra data|not well-formed/],
    ['another tag', 'd38440a0f640', /tag 19/],
    ['three items', 'd28340a0f6', /four items/],
    ['a protected header that is a text string', 'd28460a0f640', /protected header is not a byte string/],
    ['a protected header that is not a map', 'd2844101a0f640', /not a CBOR map/],
    ['an unprotected header that is an array', 'd2844080f640', /unprotected header is not a map/],
    ['a text payload', 'd28440a06161 40', /payload is neither/],
    ['a duplicate map key', 'd28440a2040004004040', /not well-formed CBOR: Duplicate/],
  ]
  for (const [what, bytes, message] of malformed) {
    it(`refuses ${what}`, () => {
      let error: unknown
      try {
        decodeSign1(hex(bytes))
      } catch (thrown) {
        error = thrown
      }
      expect(error).to.be.instanceOf(CoseError)
      expect((error as CoseError).code).to.equal('malformed')
      expect((error as Error).message).to.match(message)
    })
  }
})
