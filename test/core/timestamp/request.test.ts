import {expect} from 'chai'
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {
  buildTimestampRequest,
  describeTimestampToken,
  parseTimestampResponse,
  TimestampError,
  verifyTimestampToken,
} from '../../../src/core/timestamp/index.js'
import {opensslCa, opensslCert, opensslOk, opensslReply, opensslTsaConfig, tempDir} from './openssl.js'

// printf '' | sha256sum
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
const digest = Buffer.from(EMPTY_SHA256, 'hex')
const nonce = Buffer.from('8a1b2c3d4e5f6071', 'hex') // top bit set: must stay a positive INTEGER

function expectTimestampError(action: () => unknown, code: string, pattern: RegExp): void {
  try {
    action()
  } catch (error) {
    expect(error).to.be.instanceOf(TimestampError)
    expect((error as TimestampError).code).to.equal(code)
    expect((error as Error).message).to.match(pattern)
    return
  }
  expect.fail('expected a TimestampError')
}

describe('core/timestamp/request', () => {
  let dir: string
  let cleanup: () => Promise<void>
  let caPem: string

  before(async () => {
    ;({dir, cleanup} = await tempDir())
    caPem = await opensslCa(dir, 'ca', 'OpenSSL Test Root')
    await opensslCert(dir, 'ca', 'tsa', 'OpenSSL Test TSA', 'v3_tsa', 'rsa')
    await opensslTsaConfig(dir, 'tsa')
  })
  after(() => cleanup())

  it('builds a TimeStampReq that OpenSSL reads: SHA-256 imprint, nonce, certReq', async () => {
    await writeFile(path.join(dir, 'ours.tsq'), buildTimestampRequest(digest, nonce, true))
    const text = await opensslOk(['ts', '-query', '-in', 'ours.tsq', '-text'], dir)
    expect(text).to.match(/Version: 1/)
    expect(text).to.match(/Hash Algorithm: sha256/)
    expect(text).to.match(/0000 - e3 b0 c4 42 98 fc 1c 14-9a fb f4 c8 99 6f b9 24/)
    expect(text).to.match(/Nonce: 0x8A1B2C3D4E5F6071/)
    expect(text).to.match(/Certificate required: yes/)
    expect(text).to.match(/Policy OID: unspecified/)
  })

  it('matches the query OpenSSL builds, byte for byte apart from the nonce', async () => {
    // openssl ts -query -digest <hex> -sha256 -no_nonce -cert
    await opensslOk(
      ['ts', '-query', '-digest', EMPTY_SHA256, '-sha256', '-no_nonce', '-cert', '-out', 'openssl.tsq'],
      dir,
    )
    const theirs = await readFile(path.join(dir, 'openssl.tsq'))
    const ours = Buffer.from(buildTimestampRequest(digest, nonce, true))
    // Ours: 30 44 | version (3 bytes) | messageImprint (51) | nonce 02 09 00 8a..71 (11) | certReq 01 01 ff.
    const nonceAt = 2 + 3 + 51
    expect(ours.subarray(nonceAt, nonceAt + 11).toString('hex')).to.equal('0209008a1b2c3d4e5f6071')
    const withoutNonce = Buffer.concat([ours.subarray(2, nonceAt), ours.subarray(nonceAt + 11)])
    expect(theirs.subarray(2).toString('hex')).to.equal(withoutNonce.toString('hex'))
  })

  it('accepts an OpenSSL TSA response and returns a token we and OpenSSL verify', async () => {
    const response = await opensslReply(dir, buildTimestampRequest(digest, nonce, true))
    const token = parseTimestampResponse(response, {digest, nonce})
    const info = describeTimestampToken(token)
    expect(info.nonceHex).to.equal('8a1b2c3d4e5f6071')
    expect(info.digestHex).to.equal(EMPTY_SHA256)
    expect(info.policyOid).to.equal('1.2.3.4.1')
    expect(info.tsaName).to.equal('OpenSSL Test TSA')
    const check = await verifyTimestampToken(token, {digest, trustAnchorsPem: [caPem]})
    expect(check).to.deep.include({valid: true, error: '', tsaName: 'OpenSSL Test TSA', digestHex: EMPTY_SHA256})
  })

  it('rejects a response to another nonce or another digest', async () => {
    const response = await opensslReply(dir, buildTimestampRequest(digest, nonce, true))
    expectTimestampError(
      () => parseTimestampResponse(response, {digest, nonce: Buffer.from('01', 'hex')}),
      'invalid_response',
      /nonce/,
    )
    const otherDigest = Buffer.alloc(32, 7)
    expectTimestampError(
      () => parseTimestampResponse(response, {digest: otherDigest, nonce}),
      'invalid_response',
      /imprint/,
    )
  })

  it('reports a rejection with its failure info as tsa_unavailable', async () => {
    const {dir: strictDir, cleanup: strictCleanup} = await tempDir()
    try {
      await opensslCa(strictDir, 'ca', 'Strict Root')
      await opensslCert(strictDir, 'ca', 'tsa', 'Strict TSA', 'v3_tsa')
      await opensslTsaConfig(strictDir, 'tsa', {digests: 'sha384'}) // refuses our SHA-256 imprint
      const response = await opensslReply(strictDir, buildTimestampRequest(digest, nonce, true))
      expectTimestampError(
        () => parseTimestampResponse(response, {digest, nonce}),
        'tsa_unavailable',
        /rejection \(badAlg\).*not supported/,
      )
    } finally {
      await strictCleanup()
    }
  })

  it('rejects garbage, truncation and trailing bytes as invalid_response', async () => {
    const response = await opensslReply(dir, buildTimestampRequest(digest, nonce, true))
    for (const bad of [
      Buffer.from('<html>502 Bad Gateway</html>'),
      Buffer.alloc(0),
      response.subarray(0, response.length - 1),
      Buffer.concat([response, Buffer.of(0)]),
    ]) {
      expectTimestampError(() => parseTimestampResponse(bad, {digest, nonce}), 'invalid_response', /TimeStampResp/)
    }
  })

  it('rejects a granted status without a token', () => {
    // TimeStampResp { status { granted } }: 30 05 30 03 02 01 00
    expectTimestampError(
      () => parseTimestampResponse(Buffer.from('3005300302010000', 'hex').subarray(0, 7), {digest, nonce}),
      'invalid_response',
      /no token/,
    )
  })

  it('refuses a digest that is not 32 bytes', () => {
    expect(() => buildTimestampRequest(Buffer.alloc(20), nonce, true)).to.throw(RangeError)
  })
})
