/**
 * Agents' JWKs and detached JWS against known answers: RFC 8037 appendix A (the Ed25519 key of
 * A.1, its public key A.2, its RFC 7638 thumbprint A.3, the JWS of A.4) and `jose` for P-256.
 */
import {expect} from 'chai'
import * as jose from 'jose'
import {generateSigningJwk, jwkVerifier, publicJwkOf, signWithJwk} from '../../../src/core/crypto.js'
import {
  detachedJwsFault,
  DOES_NOT_VERIFY,
  jwsSigningInput,
  parseDetachedJws,
  signDetached,
} from '../../../src/core/jws/detached.js'
import {JwsError} from '../../../src/core/jws/errors.js'
import {jwkThumbprint, parsePrivateJwk, parsePublicJwk, thumbprintInput} from '../../../src/core/jws/jwk.js'

// RFC 8037 appendix A.1 (private key) and A.2 (its public key).
const RFC8037_PRIVATE = {
  kty: 'OKP',
  crv: 'Ed25519',
  d: 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A',
  x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
} as const
const RFC8037_PUBLIC = {kty: 'OKP', crv: 'Ed25519', x: RFC8037_PRIVATE.x} as const
// RFC 8037 appendix A.3: the thumbprint's input and its SHA-256, base64url.
const RFC8037_THUMBPRINT_INPUT = '{"crv":"Ed25519","kty":"OKP","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}'
const RFC8037_THUMBPRINT = 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k'
// RFC 8037 appendix A.4: header {"alg":"EdDSA"}, payload "Example of Ed25519 signing".
const RFC8037_HEADER = 'eyJhbGciOiJFZERTQSJ9'
const RFC8037_PAYLOAD = 'Example of Ed25519 signing'
const RFC8037_SIGNING_INPUT = 'eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc'
const RFC8037_SIGNATURE = 'hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg'

describe('JWKs and detached JWS (RFC 8037, RFC 7638, RFC 7515 appendix F)', () => {
  describe('RFC 8037 appendix A through our code', () => {
    it('A.2: the public key of the A.1 private key', () => {
      expect(publicJwkOf(parsePrivateJwk(RFC8037_PRIVATE))).to.deep.equal(RFC8037_PUBLIC)
      expect(parsePublicJwk(RFC8037_PUBLIC)).to.deep.equal(RFC8037_PUBLIC)
    })

    it('A.3: the RFC 7638 thumbprint, and its input', () => {
      expect(thumbprintInput(RFC8037_PUBLIC)).to.equal(RFC8037_THUMBPRINT_INPUT)
      expect(jwkThumbprint(RFC8037_PUBLIC)).to.equal(RFC8037_THUMBPRINT)
    })

    it('A.4: the signing input and the signature (Ed25519 is deterministic)', () => {
      const input = jwsSigningInput(RFC8037_HEADER, RFC8037_PAYLOAD)
      expect(input.toString('ascii')).to.equal(RFC8037_SIGNING_INPUT)
      expect(signWithJwk(parsePrivateJwk(RFC8037_PRIVATE), input).toString('base64url')).to.equal(RFC8037_SIGNATURE)
    })

    it('A.5: the signature verifies, and a changed payload or signature does not', () => {
      const verify = jwkVerifier(RFC8037_PUBLIC)
      const signature = Buffer.from(RFC8037_SIGNATURE, 'base64url')
      expect(verify(Buffer.from(RFC8037_SIGNING_INPUT), signature)).to.equal(true)
      expect(verify(Buffer.from(RFC8037_SIGNING_INPUT + 'x'), signature)).to.equal(false)
      const flipped = Buffer.from(signature)
      flipped[10]! ^= 1
      expect(verify(Buffer.from(RFC8037_SIGNING_INPUT), flipped)).to.equal(false)
    })

    it("A.4 detached with the key's kid: our verifier accepts it over the payload, and only that payload", () => {
      const protectedB64 = Buffer.from(JSON.stringify({alg: 'EdDSA', kid: RFC8037_THUMBPRINT})).toString('base64url')
      const signature = signWithJwk(parsePrivateJwk(RFC8037_PRIVATE), jwsSigningInput(protectedB64, RFC8037_PAYLOAD))
      const jws = parseDetachedJws(`${protectedB64}..${signature.toString('base64url')}`)
      expect(jws.header).to.deep.equal({alg: 'EdDSA', kid: RFC8037_THUMBPRINT})
      expect(detachedJwsFault(jws, RFC8037_PAYLOAD, RFC8037_PUBLIC)).to.equal(undefined)
      expect(detachedJwsFault(jws, 'Example of Ed25519 signing!', RFC8037_PUBLIC)).to.equal(DOES_NOT_VERIFY)
    })
  })

  describe('thumbprints agree with jose (calculateJwkThumbprint)', () => {
    for (const curve of ['Ed25519', 'P-256'] as const) {
      it(`${curve}`, async () => {
        const publicJwk = publicJwkOf(generateSigningJwk(curve))
        expect(jwkThumbprint(publicJwk)).to.equal(await jose.calculateJwkThumbprint(publicJwk))
      })
    }
  })

  describe('signDetached', () => {
    for (const [curve, alg] of [
      ['Ed25519', 'EdDSA'],
      ['P-256', 'ES256'],
    ] as const) {
      it(`${curve}: header {alg: ${alg}, kid}, verified by jose once the payload is put back`, async () => {
        const key = generateSigningJwk(curve)
        const publicJwk = publicJwkOf(key)
        const jws = signDetached('{"a":1}', key)
        const [protectedB64, empty, signature] = jws.split('.')
        expect(empty).to.equal('')
        expect(JSON.parse(Buffer.from(protectedB64!, 'base64url').toString())).to.deep.equal({
          alg,
          kid: jwkThumbprint(publicJwk),
        })
        const payload = Buffer.from('{"a":1}').toString('base64url')
        const verified = await jose.flattenedVerify(
          {protected: protectedB64!, payload, signature: signature!},
          await jose.importJWK(publicJwk, alg),
        )
        expect(Buffer.from(verified.payload).toString()).to.equal('{"a":1}')
      })
    }

    it("the algorithm is the key's, not the header's: an ES256 header over an Ed25519 key fails", () => {
      const key = generateSigningJwk('Ed25519')
      const header = Buffer.from(JSON.stringify({alg: 'ES256', kid: 'k'})).toString('base64url')
      const signature = signWithJwk(key, jwsSigningInput(header, 'p')).toString('base64url')
      const fault = detachedJwsFault(parseDetachedJws(`${header}..${signature}`), 'p', publicJwkOf(key))
      expect(fault).to.match(/alg is "ES256" where the key is for EdDSA/)
    })
  })

  describe('parseDetachedJws refuses what this profile leaves out', () => {
    const header = (fields: object) => Buffer.from(JSON.stringify(fields)).toString('base64url')
    for (const [what, jws, message] of [
      ['an attached payload', `${header({alg: 'EdDSA', kid: 'k'})}.cGF5bG9hZA.c2ln`, /detached payload/],
      ['a header that is not JSON', 'bm90IGpzb24..c2ln', /not JSON/],
      ['a header without kid (RFC 8037 A.4 itself)', `${RFC8037_HEADER}..${RFC8037_SIGNATURE}`, /no kid/],
      ['a header without alg', `${header({kid: 'k'})}..c2ln`, /no alg/],
      ['crit', `${header({alg: 'EdDSA', kid: 'k', crit: ['exp']})}..c2ln`, /crit/],
      ['b64 (RFC 7797)', `${header({alg: 'EdDSA', kid: 'k', b64: false})}..c2ln`, /b64/],
    ] as const) {
      it(what, () => expect(() => parseDetachedJws(jws)).to.throw(message))
    }
  })

  describe('parsePublicJwk', () => {
    const ec = publicJwkOf(generateSigningJwk('P-256')) as {x: string; y: string}
    for (const [what, jwk, message] of [
      ['a private key', RFC8037_PRIVATE, /private key/],
      ['an X25519 key', {kty: 'OKP', crv: 'X25519', x: RFC8037_PUBLIC.x}, /Ed25519 key/],
      ['an RSA key', {kty: 'RSA', n: 'AQAB', e: 'AQAB'}, /Ed25519 key/],
      ['an Ed25519 x of 31 bytes', {...RFC8037_PUBLIC, x: RFC8037_PUBLIC.x.slice(0, 42)}, /32 bytes/],
      ['padding', {...RFC8037_PUBLIC, x: RFC8037_PUBLIC.x + '='}, /32 bytes/],
      ['a P-256 point off the curve', {kty: 'EC', crv: 'P-256', x: ec.x, y: ec.x}, /not a valid P-256 public key/],
      ['an alg of another key type', {...RFC8037_PUBLIC, alg: 'ES256'}, /alg must be EdDSA/],
      ['use enc', {...RFC8037_PUBLIC, use: 'enc'}, /use must be sig/],
      ['a member no JWK has', {...RFC8037_PUBLIC, owner: 'me'}, /owner/],
      ['an array', [RFC8037_PUBLIC], /JWK object/],
    ] as const) {
      it(`refuses ${what}`, () => {
        expect(() => parsePublicJwk(jwk)).to.throw(JwsError, message)
      })
    }

    it('keeps only the members the thumbprint covers', () => {
      expect(parsePublicJwk({...RFC8037_PUBLIC, kid: 'x', alg: 'EdDSA', use: 'sig'})).to.deep.equal(RFC8037_PUBLIC)
    })
  })
})
