import {expect} from 'chai'
import {readdir, readFile, rm, stat, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {AuditError} from '../../../src/core/errors.js'
import {createTsaMaterial, describeTimestampToken, verifyTimestampToken} from '../../../src/core/timestamp/index.js'
import {openEmbeddedTsa} from '../../../src/services/tsa/index.js'
import {opensslTokenText, opensslVerifyToken, tempDir} from '../../core/timestamp/openssl.js'

// printf 'root' | sha256sum
const ROOT_HEX = '4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2'
const root = Buffer.from(ROOT_HEX, 'hex')

async function rejection(promise: Promise<unknown>): Promise<AuditError> {
  try {
    await promise
  } catch (error) {
    expect(error).to.be.instanceOf(AuditError)
    return error as AuditError
  }
  return expect.fail('expected a rejection')
}

describe('services/tsa/embedded', () => {
  let dir: string
  let cleanup: () => Promise<void>

  beforeEach(async () => ({dir, cleanup} = await tempDir('atrail-tsa-')))
  afterEach(() => cleanup())

  it('creates <data-dir>/tsa/ with ca.pem, tsa.pem and a 0600 tsa.key, and keeps no CA key', async () => {
    const dataDir = path.join(dir, 'data') // does not exist yet
    const tsa = await openEmbeddedTsa(dataDir)
    expect(tsa.kind).to.equal('embedded')
    expect((await readdir(path.join(dataDir, 'tsa'))).sort()).to.deep.equal(['ca.pem', 'tsa.key', 'tsa.pem'])
    expect((await stat(path.join(dataDir, 'tsa', 'tsa.key'))).mode & 0o777).to.equal(0o600)
    expect((await readdir(dataDir)).filter((name) => name.startsWith('.tsa-'))).to.deep.equal([])
    expect(await tsa.trustAnchorsPem()).to.deep.equal([await readFile(path.join(dataDir, 'tsa', 'ca.pem'), 'utf8')])
  })

  it('signs tokens that OpenSSL verifies with the ca.pem on disk, with a nonce and ms genTime', async () => {
    const tsa = await openEmbeddedTsa(dir)
    const issued = await tsa.timestamp(root)
    const caPem = await readFile(path.join(dir, 'tsa', 'ca.pem'), 'utf8')
    expect((await opensslVerifyToken(dir, issued.token, ROOT_HEX, caPem)).stdout).to.equal('Verification: OK\n')
    const text = await opensslTokenText(dir, issued.token)
    expect(text).to.match(/Nonce: 0x[0-9A-F]+\n/)
    expect(text).to.include(`Serial number: 0x${issued.serialNumber.toUpperCase()}\n`)
    expect(issued.tsaName).to.equal('audit-trail embedded TSA')
    expect(describeTimestampToken(issued.token).genTime.getTime()).to.equal(issued.genTime.getTime())
    expect(Math.abs(issued.genTime.getTime() - Date.now())).to.be.lessThan(60_000)
  })

  it('reuses the files on the next start: same CA, same files, older tokens still verify', async () => {
    const first = await openEmbeddedTsa(dir)
    const token = (await first.timestamp(root)).token
    const files = ['ca.pem', 'tsa.pem', 'tsa.key'].map((name) => path.join(dir, 'tsa', name))
    const before = await Promise.all(
      files.map(async (file) => [await readFile(file, 'utf8'), (await stat(file)).mtimeMs]),
    )
    const second = await openEmbeddedTsa(dir)
    const after = await Promise.all(
      files.map(async (file) => [await readFile(file, 'utf8'), (await stat(file)).mtimeMs]),
    )
    expect(after).to.deep.equal(before)
    expect(await second.trustAnchorsPem()).to.deep.equal(await first.trustAnchorsPem())
    expect(
      (await verifyTimestampToken(token, {digest: root, trustAnchorsPem: await second.trustAnchorsPem()})).valid,
    ).to.equal(true)
  })

  it('lets concurrent first starts agree on one TSA and leaves no staging directory', async () => {
    const opened = await Promise.all([1, 2, 3, 4].map(() => openEmbeddedTsa(dir)))
    const anchors = await Promise.all(opened.map((tsa) => tsa.trustAnchorsPem()))
    expect(new Set(anchors.map((pems) => pems.join()))).to.have.property('size', 1)
    expect(anchors[0]).to.deep.equal([await readFile(path.join(dir, 'tsa', 'ca.pem'), 'utf8')])
    expect((await readdir(dir)).sort()).to.deep.equal(['tsa'])
  })

  it('refuses an incomplete tsa/ directory, naming the missing file', async () => {
    await openEmbeddedTsa(dir)
    await rm(path.join(dir, 'tsa', 'tsa.key'))
    const error = await rejection(openEmbeddedTsa(dir))
    expect(error.code).to.equal('storage_unavailable')
    expect(error.message).to.match(/incomplete \(missing tsa\.key\)/)
  })

  it('refuses a key that does not belong to the certificate (self-test at start)', async () => {
    await openEmbeddedTsa(dir)
    await writeFile(path.join(dir, 'tsa', 'tsa.key'), (await createTsaMaterial()).tsaKeyPem)
    const error = await rejection(openEmbeddedTsa(dir))
    expect(error.code).to.equal('storage_unavailable')
    expect(error.message).to.match(/does not work: the signature does not verify/)
  })

  it('answers a wrong-sized digest with tsa_unavailable', async () => {
    const tsa = await openEmbeddedTsa(dir)
    const error = await rejection(tsa.timestamp(Buffer.alloc(31)))
    expect(error.code).to.equal('tsa_unavailable')
    expect(error.status).to.equal(502)
  })
})
