import {expect} from 'chai'
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {AuditError} from '../../../src/core/errors.js'
import {buildTimestampRequest, createTsaMaterial, verifyTimestampToken} from '../../../src/core/timestamp/index.js'
import {externalTsa} from '../../../src/services/tsa/index.js'
import {
  opensslCa,
  opensslCert,
  opensslOk,
  opensslReply,
  opensslTokenText,
  opensslTsaConfig,
  opensslVerifyToken,
  tempDir,
} from '../../core/timestamp/openssl.js'

// printf 'merkle' | sha256sum
const ROOT_HEX = '7975edd9e7393c229e744913fe0d0bb86fb4cf46906e2e51152137e20ad15590'
const root = Buffer.from(ROOT_HEX, 'hex')

type Handler = (request: IncomingMessage, body: Buffer, response: ServerResponse) => void | Promise<void>

/** A loopback HTTP server on a free port; `handler` answers each POST once its body is read. */
async function serve(handler: Handler): Promise<{url: string; server: Server}> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      Promise.resolve(handler(request, Buffer.concat(chunks), response)).catch((error) => {
        response.writeHead(599).end(String(error))
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsr`, server}
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
}

async function failure(promise: Promise<unknown>): Promise<AuditError> {
  try {
    await promise
  } catch (error) {
    expect(error).to.be.instanceOf(AuditError)
    expect((error as AuditError).code).to.equal('tsa_unavailable')
    expect((error as AuditError).status).to.equal(502)
    return error as AuditError
  }
  return expect.fail('expected tsa_unavailable')
}

function sendReply(response: ServerResponse, der: Uint8Array): void {
  response.writeHead(200, {'content-type': 'application/timestamp-reply'}).end(der)
}

describe('services/tsa/external (against an OpenSSL TSA over HTTP)', () => {
  let dir: string
  let cleanup: () => Promise<void>
  let caPem: string
  let url: string
  let server: Server
  const seen: Array<{method?: string; type?: string; body: Buffer}> = []

  before(async () => {
    ;({dir, cleanup} = await tempDir('atrail-ext-'))
    caPem = await opensslCa(dir, 'ca', 'OpenSSL Test Root')
    await opensslCert(dir, 'ca', 'tsa', 'OpenSSL Test TSA', 'v3_tsa', 'rsa')
    await opensslTsaConfig(dir, 'tsa')
    ;({url, server} = await serve(async (request, body, response) => {
      seen.push({method: request.method, type: request.headers['content-type'], body})
      sendReply(response, await opensslReply(dir, body))
    }))
  })
  after(async () => {
    await stop(server)
    await cleanup()
  })

  it('gets a token that we and `openssl ts -verify` accept with the TSA CA', async () => {
    const tsa = externalTsa({url, caPem: [caPem]})
    expect(tsa.kind).to.equal('external')
    const issued = await tsa.timestamp(root)
    expect(issued.tsaName).to.equal('OpenSSL Test TSA')
    expect(Math.abs(issued.genTime.getTime() - Date.now())).to.be.lessThan(60_000)
    expect((await verifyTimestampToken(issued.token, {digest: root, trustAnchorsPem: [caPem]})).valid).to.equal(true)
    expect((await opensslVerifyToken(dir, issued.token, ROOT_HEX, caPem)).stdout).to.equal('Verification: OK\n')
    expect(await opensslTokenText(dir, issued.token)).to.include(
      `Serial number: 0x${issued.serialNumber.toUpperCase()}\n`,
    )
  })

  it('POSTs application/timestamp-query with a nonce and certReq', async () => {
    seen.length = 0
    await externalTsa({url, caPem: [caPem]}).timestamp(root)
    expect(seen).to.have.length(1)
    expect(seen[0]).to.include({method: 'POST', type: 'application/timestamp-query'})
    await writeFile(path.join(dir, 'seen.tsq'), seen[0]!.body)
    const text = await opensslOk(['ts', '-query', '-in', 'seen.tsq', '-text'], dir)
    expect(text).to.match(/Nonce: 0x[0-9A-F]+\n/)
    expect(text).to.match(/Certificate required: yes\n/)
    expect(text).to.match(/0000 - 79 75 ed d9/)
  })

  it('accepts ESSCertIDv2 (ess_cert_id_alg = sha256) as well as the default SHA-1 ESSCertID', async () => {
    const {dir: v2Dir, cleanup: v2Cleanup} = await tempDir('atrail-ext2-')
    const v2 = await serve(async (_request, body, response) => sendReply(response, await opensslReply(v2Dir, body)))
    try {
      const v2Ca = await opensslCa(v2Dir, 'ca', 'V2 Root')
      await opensslCert(v2Dir, 'ca', 'tsa', 'V2 TSA', 'v3_tsa')
      await opensslTsaConfig(v2Dir, 'tsa', {essCertIdAlg: 'sha256'})
      const issued = await externalTsa({url: v2.url, caPem: [v2Ca]}).timestamp(root)
      expect(issued.tsaName).to.equal('V2 TSA')
      await writeFile(path.join(v2Dir, 'v2.der'), issued.token)
      expect(await opensslOk(['cms', '-cmsout', '-print', '-inform', 'DER', '-in', 'v2.der'], v2Dir)).to.include(
        'id-smime-aa-signingCertificateV2',
      )
    } finally {
      await stop(v2.server)
      await v2Cleanup()
    }
  })

  it('refuses a token from a TSA the given CA did not certify', async () => {
    const other = await createTsaMaterial()
    const error = await failure(externalTsa({url, caPem: [other.caCertPem]}).timestamp(root))
    expect(error.message).to.match(
      /^TSA http:\/\/127\.0\.0\.1:\d+\/tsr: the token does not verify: the TSA certificate does not chain/,
    )
  })

  it('refuses a response made for another nonce (a replayed answer)', async () => {
    const stale = await opensslReply(dir, buildTimestampRequest(root, Buffer.from('0102030405060708', 'hex'), true))
    const replay = await serve((_request, _body, response) => sendReply(response, stale))
    try {
      const error = await failure(externalTsa({url: replay.url, caPem: [caPem]}).timestamp(root))
      expect(error.message).to.match(/does not carry the nonce of the request/)
    } finally {
      await stop(replay.server)
    }
  })

  it('refuses a response for another digest (same nonce)', async () => {
    // The fake TSA rewrites the imprint of each query before OpenSSL answers it.
    const swapped = await serve(async (_request, body, response) => {
      const at = body.indexOf(root)
      body.fill(0x11, at, at + 32)
      sendReply(response, await opensslReply(dir, body))
    })
    try {
      const error = await failure(externalTsa({url: swapped.url, caPem: [caPem]}).timestamp(root))
      expect(error.message).to.match(/timestamps another message imprint than the one requested/)
    } finally {
      await stop(swapped.server)
    }
  })

  it('gives up on a TSA that never answers after timeoutMs', async () => {
    const silent = await serve(() => undefined)
    try {
      const started = Date.now()
      const error = await failure(externalTsa({url: silent.url, caPem: [caPem], timeoutMs: 200}).timestamp(root))
      expect(error.message).to.match(/no answer within 200 ms/)
      expect(Date.now() - started).to.be.lessThan(5000)
    } finally {
      await stop(silent.server)
    }
  })

  it('reports HTTP 500, garbage, a refused connection and a rejection status as tsa_unavailable', async () => {
    const broken = await serve((request, _body, response) => {
      if (request.url === '/500') response.writeHead(500, 'Internal Server Error').end('oops')
      else response.writeHead(200, {'content-type': 'text/html'}).end('<html>not a timestamp</html>')
    })
    const {dir: strictDir, cleanup: strictCleanup} = await tempDir('atrail-ext3-')
    const strict = await serve(async (_request, body, response) =>
      sendReply(response, await opensslReply(strictDir, body)),
    )
    try {
      await opensslCa(strictDir, 'ca', 'Strict Root')
      await opensslCert(strictDir, 'ca', 'tsa', 'Strict TSA', 'v3_tsa')
      await opensslTsaConfig(strictDir, 'tsa', {digests: 'sha384'})
      const base = broken.url.replace(/\/tsr$/, '')
      expect((await failure(externalTsa({url: `${base}/500`, caPem: [caPem]}).timestamp(root))).message).to.match(
        /answered HTTP 500 Internal Server Error$/,
      )
      expect((await failure(externalTsa({url: `${base}/html`, caPem: [caPem]}).timestamp(root))).message).to.match(
        /not a DER TimeStampResp/,
      )
      expect((await failure(externalTsa({url: strict.url, caPem: [caPem]}).timestamp(root))).message).to.match(
        /refused the request: rejection \(badAlg\)/,
      )
      // A port that was just free and is closed again: nothing listens there.
      const gone = await serve(() => undefined)
      await stop(gone.server)
      expect((await failure(externalTsa({url: gone.url, caPem: [caPem]}).timestamp(root))).message).to.match(
        /unreachable \(ECONNREFUSED\)/,
      )
    } finally {
      await stop(broken.server)
      await stop(strict.server)
      await strictCleanup()
    }
  })

  it('uses the injected fetch, and hands out each trust anchor as one PEM', async () => {
    let calls = 0
    const fake: typeof fetch = async () => {
      calls++
      return new Response('garbage', {status: 200})
    }
    const tsa = externalTsa({url: 'https://tsa.example/tsr?key=secret', caPem: [caPem + caPem], fetch: fake})
    const error = await failure(tsa.timestamp(root))
    expect(calls).to.equal(1)
    expect(error.message).to.match(/^TSA https:\/\/tsa\.example\/tsr: /)
    expect(error.message).not.to.include('secret')
    expect(await tsa.trustAnchorsPem()).to.deep.equal([caPem, caPem])
  })

  it('refuses a configuration without a URL or without a certificate', () => {
    expect(() => externalTsa({url: 'not a url', caPem: [caPem]})).to.throw(AuditError, /not a URL/)
    expect(() => externalTsa({url: 'ftp://tsa.example/', caPem: [caPem]})).to.throw(AuditError, /http or https/)
    expect(() => externalTsa({url, caPem: ['no certificate']})).to.throw(AuditError, /no PEM certificate/)
  })
})
