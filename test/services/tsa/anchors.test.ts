import {expect} from 'chai'
import {mkdir, readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import type {AuditError} from '../../../src/core/errors.js'
import {createTsaMaterial, splitCertificates, type IssuedToken} from '../../../src/core/timestamp/index.js'
import {
  directoryAnchors,
  EXTERNAL_ANCHORS_FILE,
  withKnownAnchors,
  type TimestampAuthority,
} from '../../../src/services/tsa/index.js'
import {removeDir, tempDir} from '../../support/harness.js'

/** A stand-in authority that counts the tokens asked of it, and refuses them while `refusing`. */
function fakeAuthority(
  kind: 'embedded' | 'external',
  anchors: string[],
): TimestampAuthority & {asked: number; refusing: boolean} {
  const fake = {
    kind,
    asked: 0,
    refusing: false,
    async timestamp(): Promise<IssuedToken> {
      fake.asked++
      if (fake.refusing) throw new Error('the TSA refused')
      return {token: new Uint8Array([1]), genTime: new Date(), tsaName: 'fake'} as IssuedToken
    },
    trustAnchorsPem: async () => anchors,
  }
  return fake
}

describe('services/tsa/anchors: the trust anchors a data directory knows', function () {
  this.timeout(20_000)
  let dir: string
  let caA: string
  let caB: string
  before(async () => {
    // Two unrelated CA certificates, each one PEM block as splitCertificates writes it.
    ;[caA, caB] = (await Promise.all([createTsaMaterial({commonName: 'A'}), createTsaMaterial({commonName: 'B'})])).map(
      (m) => splitCertificates([m.caCertPem])[0]!,
    )
  })
  beforeEach(async () => {
    dir = await tempDir()
  })
  afterEach(async () => {
    await removeDir(dir)
  })

  it("records an external TSA's CA once it issues, once, and a configured server trusts its own CA only", async () => {
    const external = fakeAuthority('external', [caA])
    const authority = withKnownAnchors(external, directoryAnchors(dir))
    // A refused request records nothing.
    external.refusing = true
    const refused = await authority.timestamp(new Uint8Array(32)).then(
      () => undefined,
      (e: Error) => e,
    )
    expect(refused?.message).to.equal('the TSA refused')
    expect(await readFile(path.join(dir, EXTERNAL_ANCHORS_FILE), 'utf8').catch(() => 'absent')).to.equal('absent')
    external.refusing = false
    await authority.timestamp(new Uint8Array(32))
    await authority.timestamp(new Uint8Array(32))
    expect(external.asked).to.equal(3)
    expect(await readFile(path.join(dir, EXTERNAL_ANCHORS_FILE), 'utf8')).to.equal(caA)
    // A certificate planted in the data directory is not trusted by a service configured with --tsa-ca.
    await writeFile(path.join(dir, EXTERNAL_ANCHORS_FILE), caA + caB)
    await mkdir(path.join(dir, 'tsa'))
    await writeFile(path.join(dir, 'tsa', 'ca.pem'), caB)
    expect(await authority.trustAnchorsPem()).to.deep.equal([caA])
  })

  it(
    'without an external TSA: the recorded anchors and the embedded CA, and no embedded TSA made for an externally ' +
      'stamped store',
    async () => {
      await writeFile(path.join(dir, EXTERNAL_ANCHORS_FILE), caA)
      let made = 0
      const embedded = {...fakeAuthority('embedded', [caB]), trustAnchorsPem: async () => (made++, [caB])}
      const authority = withKnownAnchors(embedded, directoryAnchors(dir))
      expect(await authority.trustAnchorsPem()).to.deep.equal([caA])
      expect(made).to.equal(0)
      await mkdir(path.join(dir, 'tsa'))
      await writeFile(path.join(dir, 'tsa', 'ca.pem'), caB)
      expect(await authority.trustAnchorsPem()).to.deep.equal([caA, caB])
      // A store that knows no anchor yet answers with the embedded TSA's (made on first use).
      const fresh = await tempDir()
      try {
        expect(await withKnownAnchors(embedded, directoryAnchors(fresh)).trustAnchorsPem()).to.deep.equal([caB])
        expect(made).to.equal(1)
      } finally {
        await removeDir(fresh)
      }
    },
  )

  it('ignores a recorded file that is not PEM rather than failing every check', async () => {
    await writeFile(
      path.join(dir, EXTERNAL_ANCHORS_FILE),
      '-----BEGIN CERTIFICATE-----\n!!! not base64 !!!\n-----END CERTIFICATE-----\n',
    )
    await mkdir(path.join(dir, 'tsa'))
    await writeFile(path.join(dir, 'tsa', 'ca.pem'), caB)
    expect(
      await withKnownAnchors(fakeAuthority('embedded', [caB]), directoryAnchors(dir)).trustAnchorsPem(),
    ).to.deep.equal([caB])
  })

  it('hands on no token when the anchors cannot be recorded, and recovers once they can', async () => {
    const external = fakeAuthority('external', [caA])
    const authority = withKnownAnchors(external, directoryAnchors(dir))
    // The record's temporary file cannot be created while a directory holds its name.
    await mkdir(path.join(dir, `${EXTERNAL_ANCHORS_FILE}.tmp`))
    const error = await authority.timestamp(new Uint8Array(32)).then(
      () => undefined,
      (e: AuditError) => e,
    )
    expect(error).to.include({code: 'storage_unavailable', status: 503})
    expect(error!.message).to.match(/^nothing was timestamped: the TSA's CA certificates could not be recorded/)
    await removeDir(path.join(dir, `${EXTERNAL_ANCHORS_FILE}.tmp`))
    await authority.timestamp(new Uint8Array(32))
    expect(external.asked).to.equal(2)
    expect(await readFile(path.join(dir, EXTERNAL_ANCHORS_FILE), 'utf8')).to.equal(caA)
  })
})
