/**
 * The salted hash of payload commitments (docs/verification.md 2) hashes in a reused buffer: it
 * must give SHA-256(salt || UTF-8(text)) whatever was hashed before it and at every length, in the
 * reused buffer and past it.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import fc from 'fast-check'
import {isLowerHex, saltedSha256Hex} from '../../src/core/crypto.js'

/** sha256sum(1) of bytes: an outside tool for the known answers. */
const sha256sum = (bytes: Buffer): string => execFileSync('sha256sum', {input: bytes}).toString().slice(0, 64)

/** The naive form: the salt's bytes and the text's UTF-8 bytes concatenated, then hashed. */
const reference = (salt: string, text: string): string =>
  createHash('sha256')
    .update(Buffer.concat([Buffer.from(salt, 'hex'), Buffer.from(text, 'utf8')]))
    .digest('hex')

const salt = fc.uint8Array({minLength: 32, maxLength: 32}).map((bytes) => Buffer.from(bytes).toString('hex'))
// Texts up to past the reused buffer: ASCII, multi-byte characters, surrogate pairs and lone ones.
const text = fc.oneof(
  fc.string({unit: 'binary', maxLength: 64}),
  fc
    .tuple(fc.constantFrom('a', 'é', '€', '😀', '\ud800'), fc.integer({min: 0, max: 4000}))
    .map(([c, n]) => c.repeat(n)),
)

describe('saltedSha256Hex (commitments, docs/verification.md 2)', () => {
  it('gives the known answer of sha256sum over the salt bytes and the UTF-8 text', () => {
    const saltHex = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'
    for (const value of ['{"customer":"Zoë"}', '€'.repeat(2730), '€'.repeat(2731)]) {
      const expected = sha256sum(Buffer.concat([Buffer.from(saltHex, 'hex'), Buffer.from(value, 'utf8')]))
      expect(saltedSha256Hex(saltHex, value), `${value.length} characters`).to.equal(expected)
    }
  })

  it('equals the naive concatenation for any texts hashed one after another', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(salt, text), {minLength: 1, maxLength: 6}), (jobs) => {
        for (const [s, t] of jobs) expect(saltedSha256Hex(s, t)).to.equal(reference(s, t))
      }),
      {numRuns: 300},
    )
  })

  it('refuses a salt that is not 64 hex characters', () => {
    for (const bad of ['', 'ab', '0'.repeat(63), '0'.repeat(65), 'g'.repeat(64), `${'0'.repeat(62)}zz`]) {
      expect(() => saltedSha256Hex(bad, 'x'), bad).to.throw('a salt is 64 hex characters')
      expect(() => saltedSha256Hex(bad, 'x'.repeat(5000)), bad).to.throw('a salt is 64 hex characters')
    }
  })
})

describe('isLowerHex', () => {
  it('agrees with the regular expression it replaces', () => {
    const candidate = fc.oneof(
      salt,
      fc.string({unit: fc.constantFrom(...'0123456789abcdefABCDEFg-'.split('')), minLength: 62, maxLength: 66}),
    )
    fc.assert(
      fc.property(candidate, (value) => {
        expect(isLowerHex(value, 32)).to.equal(/^[0-9a-f]{64}$/.test(value))
      }),
      {numRuns: 500},
    )
    expect(isLowerHex('0'.repeat(64), 32)).to.equal(true)
    expect(isLowerHex('A'.repeat(64), 32)).to.equal(false)
    expect(isLowerHex('\u0660'.repeat(64), 32)).to.equal(false)
  })
})
