import {expect} from 'chai'
import {gzipSync} from 'node:zlib'
import {AuditError} from '../../../src/core/errors.js'
import {OTLP_MAX_BODY_BYTES, readOtlpBody} from '../../../src/services/otlp/body.js'

async function rejected(promise: Promise<unknown>): Promise<AuditError> {
  try {
    await promise
  } catch (error) {
    expect(error).to.be.instanceOf(AuditError)
    return error as AuditError
  }
  expect.fail('expected an AuditError')
}

const PAYLOAD = Buffer.from('{"resourceSpans":[]}')

describe('services/otlp/body (Content-Encoding, size limit)', () => {
  it('recommends the OTLP default limit of 20 MiB', () => {
    expect(OTLP_MAX_BODY_BYTES).to.equal(20_971_520)
  })

  it('passes an uncompressed body through, whatever spelling of "none"', async () => {
    for (const encoding of [undefined, '', 'identity', ' Identity ']) {
      expect(await readOtlpBody(PAYLOAD, encoding, 1024)).to.equal(PAYLOAD)
    }
  })

  it('inflates gzip (also x-gzip, any case)', async () => {
    for (const encoding of ['gzip', 'GZIP', 'x-gzip', ' gzip']) {
      expect(Buffer.from(await readOtlpBody(gzipSync(PAYLOAD), encoding, 1024)).equals(PAYLOAD)).to.equal(true)
    }
    // Two gzip members one after the other are one body (RFC 1952 section 2.2).
    const twice = Buffer.concat([gzipSync(PAYLOAD), gzipSync(PAYLOAD)])
    expect(Buffer.from(await readOtlpBody(twice, 'gzip', 1024)).toString()).to.equal(PAYLOAD.toString().repeat(2))
  })

  it('accepts a body of exactly maxBytes, before and after inflating', async () => {
    const exact = Buffer.alloc(1000, 0x61)
    expect((await readOtlpBody(exact, undefined, 1000)).length).to.equal(1000)
    expect((await readOtlpBody(gzipSync(exact), 'gzip', 1000)).length).to.equal(1000)
  })

  it('answers payload_too_large for a larger body, compressed or not', async () => {
    const error = await rejected(readOtlpBody(Buffer.alloc(1001), undefined, 1000))
    expect(error.code).to.equal('payload_too_large')
    expect(error.status).to.equal(413)
    expect((await rejected(readOtlpBody(gzipSync(Buffer.alloc(1001)), 'gzip', 1000))).code).to.equal(
      'payload_too_large',
    )
  })

  it('stops inflating a gzip bomb at the limit', async () => {
    // 32 MiB of zeros gzip to about 32 KiB; the limit is 1 MiB.
    const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024), {level: 1})
    expect(bomb.length).to.be.below(256 * 1024)
    const started = process.memoryUsage().arrayBuffers
    const error = await rejected(readOtlpBody(bomb, 'gzip', 1024 * 1024))
    expect(error.code).to.equal('payload_too_large')
    expect(error.message).to.equal('the OTLP request body is larger than 1048576 bytes')
    expect(process.memoryUsage().arrayBuffers - started).to.be.below(16 * 1024 * 1024)
  })

  it('answers validation_error for a body that is not gzip', async () => {
    for (const body of [PAYLOAD, gzipSync(PAYLOAD).subarray(0, 12), Buffer.alloc(0)]) {
      const error = await rejected(readOtlpBody(body, 'gzip', 1024))
      expect(error.code).to.equal('validation_error')
      expect(error.message).to.match(/^the body is not valid gzip: /)
    }
  })

  it('answers unsupported_media_type (415) for other encodings', async () => {
    for (const encoding of ['br', 'deflate', 'zstd', 'gzip, gzip']) {
      const error = await rejected(readOtlpBody(PAYLOAD, encoding, 1024))
      expect(error.code).to.equal('unsupported_media_type')
      expect(error.status).to.equal(415)
      expect(error.message).to.include(`"${encoding}"`)
    }
  })
})
