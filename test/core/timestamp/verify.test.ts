import {expect} from 'chai'
import fc from 'fast-check'
import {
  createTsaMaterial,
  derToPem,
  issueTimestampToken,
  verifyTimestampToken,
  type TsaMaterial,
} from '../../../src/core/timestamp/index.js'
import {openssl, opensslCa, opensslCert, opensslVerifyToken, tempDir} from './openssl.js'

// printf 'audit' | sha256sum
const AUDIT_SHA256 = 'b81f37a043a6f767e7c94d105f4bd31282f3ecc20680bb9d09bd93461cf4c863'
const digest = Buffer.from(AUDIT_SHA256, 'hex')

function flip(token: Uint8Array, offset: number, mask = 0x01): Uint8Array {
  const copy = Uint8Array.from(token)
  copy[offset]! ^= mask
  return copy
}

/** [start, end) of the TSTInfo: id-ct-TSTInfo, then [0] <len> 04 <len> 30 ... (DER, short or 81 lengths). */
function tstInfoRange(token: Uint8Array): [number, number] {
  const hex = Buffer.from(token).toString('hex')
  const match =
    /060b2a864886f70d0109100104a0(?:[0-7][0-9a-f]|81[0-9a-f]{2})04(?:([0-7][0-9a-f])|81([0-9a-f]{2}))30/.exec(hex)!
  const length = parseInt(match[1] ?? match[2]!, 16)
  const start = (match.index + match[0].length - 2) / 2
  return [start, start + length]
}

/** [start, end) of the signature value: the last TLV of the token, 04 <len> <ECDSA-Sig-Value>. */
function signatureRange(token: Uint8Array): [number, number] {
  for (let length = 68; length <= 74; length++) {
    const at = token.length - length - 2
    if (token[at] === 0x04 && token[at + 1] === length && token[at + 2] === 0x30) return [at + 2, token.length]
  }
  throw new Error('signature not found')
}

describe('core/timestamp/verify', () => {
  let dir: string
  let cleanup: () => Promise<void>
  let material: TsaMaterial
  let token: Uint8Array
  const anchors = () => ({digest, trustAnchorsPem: [material.caCertPem]})

  before(async () => {
    ;({dir, cleanup} = await tempDir())
    material = await createTsaMaterial({commonName: 'Verify TSA'})
    token = (await issueTimestampToken(material, digest, {nonce: 42n, now: new Date(Date.now() + 1234)})).token
  })
  after(() => cleanup())

  it('accepts a good token and reports genTime (ISO, ms), TSA name and digest', async () => {
    const result = await verifyTimestampToken(token, anchors())
    expect(result).to.deep.equal({
      valid: true,
      error: '',
      genTime: result.genTime,
      tsaName: 'Verify TSA',
      digestHex: AUDIT_SHA256,
    })
    expect(result.genTime).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  it('rejects a token for another digest, as OpenSSL does', async () => {
    const other = Buffer.alloc(32, 0xab)
    const result = await verifyTimestampToken(token, {...anchors(), digest: other})
    expect(result.valid).to.equal(false)
    expect(result.error).to.equal(
      `message imprint mismatch: the token timestamps ${AUDIT_SHA256}, expected ${other.toString('hex')}`,
    )
    expect(result.digestHex).to.equal(AUDIT_SHA256)
    expect((await opensslVerifyToken(dir, token, other.toString('hex'), material.caCertPem)).stdout).to.equal(
      'Verification: FAILED\n',
    )
  })

  it('rejects a token whose TSA does not chain to the trust anchor, as OpenSSL does', async () => {
    const stranger = await createTsaMaterial({commonName: 'Verify TSA'})
    const result = await verifyTimestampToken(token, {digest, trustAnchorsPem: [stranger.caCertPem]})
    expect(result.valid).to.equal(false)
    expect(result.error).to.match(/^the TSA certificate does not chain to a trust anchor/)
    expect((await opensslVerifyToken(dir, token, AUDIT_SHA256, stranger.caCertPem)).stdout).to.equal(
      'Verification: FAILED\n',
    )
  })

  it('accepts any of several anchors, and the TSA certificate itself as the anchor', async () => {
    const stranger = await createTsaMaterial()
    expect(
      (await verifyTimestampToken(token, {digest, trustAnchorsPem: [stranger.caCertPem, material.caCertPem]})).valid,
    ).to.equal(true)
    expect((await verifyTimestampToken(token, {digest, trustAnchorsPem: [material.tsaCertPem]})).valid).to.equal(true)
  })

  it('rejects a signer certificate lacking the timeStamping EKU or with it not critical, like OpenSSL', async () => {
    const caPem = await opensslCa(dir, 'ekuca', 'EKU Test Root')
    for (const [section, pattern] of [
      ['v3_no_eku', /not for timestamping/],
      ['v3_eku_not_critical', /non-critical extended key usage/],
    ] as const) {
      const {certPem, keyPem} = await opensslCert(dir, 'ekuca', section, `TSA ${section}`, section)
      const bad = (await issueTimestampToken({caCertPem: caPem, tsaCertPem: certPem, tsaKeyPem: keyPem}, digest)).token
      const result = await verifyTimestampToken(bad, {digest, trustAnchorsPem: [caPem]})
      expect(result.valid, section).to.equal(false)
      expect(result.error, section).to.match(pattern)
      expect((await opensslVerifyToken(dir, bad, AUDIT_SHA256, caPem)).stdout, section).to.equal(
        'Verification: FAILED\n',
      )
    }
  })

  it('rejects a flipped byte in the signature and in the TSTInfo, as OpenSSL does', async () => {
    const [sigStart, sigEnd] = signatureRange(token)
    const [tstStart] = tstInfoRange(token)
    const cases = [
      {name: 'signature', bad: flip(token, sigEnd - 1), pattern: /signature does not verify/},
      // TSTInfo byte 10 is inside the policy OID: still DER, but no longer what was signed.
      {name: 'tstinfo', bad: flip(token, tstStart + 10), pattern: /messageDigest attribute does not match/},
    ]
    expect(sigStart).to.be.greaterThan(tstStart)
    for (const {name, bad, pattern} of cases) {
      const result = await verifyTimestampToken(bad, anchors())
      expect(result.valid, name).to.equal(false)
      expect(result.error, name).to.match(pattern)
      expect((await opensslVerifyToken(dir, bad, AUDIT_SHA256, material.caCertPem)).stdout, name).to.equal(
        'Verification: FAILED\n',
      )
    }
  })

  it('notices a flipped bit at every offset of the TSTInfo or the signature (exhaustive)', async () => {
    for (const [start, end] of [tstInfoRange(token), signatureRange(token)]) {
      for (let offset = start; offset < end; offset++) {
        const result = await verifyTimestampToken(flip(token, offset), anchors())
        expect(result.valid, `offset ${offset}`).to.equal(false)
      }
    }
  })

  it('never lets a changed byte anywhere alter what a valid token says (property)', async () => {
    const original = await verifyTimestampToken(token, anchors())
    await fc.assert(
      fc.asyncProperty(fc.nat({max: token.length - 1}), fc.integer({min: 1, max: 255}), async (offset, mask) => {
        const result = await verifyTimestampToken(flip(token, offset, mask), anchors())
        if (result.valid) {
          expect([result.genTime, result.tsaName, result.digestHex]).to.deep.equal([
            original.genTime,
            original.tsaName,
            original.digestHex,
          ])
        } else {
          expect(result.error).to.be.a('string').and.not.equal('')
        }
      }),
      {numRuns: 100},
    )
  })

  it('answers garbage with valid=false and a reason, never by throwing', async () => {
    const inputs: Array<[Uint8Array, RegExp]> = [
      [new Uint8Array(0), /not a DER CMS ContentInfo/],
      [Buffer.from('hello world'), /not a DER CMS ContentInfo/],
      [Uint8Array.from(token.subarray(0, token.length - 5)), /not a DER CMS ContentInfo/],
      [Uint8Array.from([...token, 0]), /not a DER CMS ContentInfo/],
      // A DER value of another kind: the CA certificate itself.
      [
        Buffer.from(material.caCertPem.replace(/-----[^-]+-----|\s/g, ''), 'base64'),
        /not a DER CMS ContentInfo|content type/,
      ],
    ]
    for (const [input, pattern] of inputs) {
      const result = await verifyTimestampToken(input, anchors())
      expect(result.valid).to.equal(false)
      expect(result.error).to.match(pattern)
    }
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({maxLength: 300}), async (bytes) => {
        const result = await verifyTimestampToken(bytes, anchors())
        expect(result.valid).to.equal(false)
        expect(result.error).not.to.equal('')
      }),
      {numRuns: 100},
    )
  })

  it('says so when no usable trust anchor is given', async () => {
    expect((await verifyTimestampToken(token, {digest, trustAnchorsPem: []})).error).to.match(/no trust anchor/)
    expect((await verifyTimestampToken(token, {digest, trustAnchorsPem: ['not pem']})).error).to.match(
      /no trust anchor/,
    )
    const notACertificate = derToPem(Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x01), 'CERTIFICATE')
    expect((await verifyTimestampToken(token, {digest, trustAnchorsPem: [notACertificate]})).error).to.match(
      /not a readable PEM certificate/,
    )
  })

  it(
    'checks the certificate at genTime: a token from before the certificate fails, one from its lifetime passes ' +
      'after expiry',
    async () => {
      const old = await createTsaMaterial({now: new Date('2001-01-01T00:00:00Z')}) // valid 2001..2011
      const early = await issueTimestampToken(old, digest, {now: new Date('2000-06-01T00:00:00Z')})
      const result = await verifyTimestampToken(early.token, {digest, trustAnchorsPem: [old.caCertPem]})
      expect(result.valid).to.equal(false)
      expect(result.error).to.match(/not yet valid or expired/)
      const inLifetime = await issueTimestampToken(old, digest, {now: new Date('2005-06-01T00:00:00.250Z')})
      expect(await verifyTimestampToken(inLifetime.token, {digest, trustAnchorsPem: [old.caCertPem]})).to.deep.include({
        valid: true,
        genTime: '2005-06-01T00:00:00.250Z',
      })
      // OpenSSL checks at the current time instead; with -attime inside the lifetime it agrees.
      const attime = String(Date.parse('2005-06-01T00:00:00Z') / 1000)
      await opensslVerifyToken(dir, inLifetime.token, AUDIT_SHA256, old.caCertPem)
      const atThen = await openssl(
        [
          'ts',
          '-verify',
          '-digest',
          AUDIT_SHA256,
          '-token_in',
          '-in',
          'token.der',
          '-CAfile',
          'ca.pem',
          '-attime',
          attime,
        ],
        dir,
      )
      expect(atThen.stdout).to.equal('Verification: OK\n')
    },
  )
})
