import {expect} from 'chai'
import {existsSync} from 'node:fs'
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {createTsaMaterial, splitCertificates} from '../../src/core/timestamp/index.js'
import {startService} from '../../src/server/start.js'
import {EXTERNAL_ANCHORS_FILE} from '../../src/services/tsa/index.js'
import {useTempDir} from '../support/hooks.js'

describe('server/start: what a served data directory holds', function () {
  this.timeout(30_000)
  const dir = useTempDir()

  it(
    'holds the embedded TSA (tsa/ca.pem, the anchor GET /v1/timestamps/ca gives) from start-up, before any ' +
      'timestamp',
    async () => {
      const service = await startService({dataDir: dir, host: '127.0.0.1', port: 0})
      try {
        expect(existsSync(path.join(dir, 'tsa', 'ca.pem'))).to.equal(true)
        const served = await (await fetch(`${service.url}/v1/timestamps/ca`)).text()
        expect(served).to.equal(await readFile(path.join(dir, 'tsa', 'ca.pem'), 'utf8'))
        expect(await (await fetch(`${service.url}/v1/timestamps`)).json()).to.deep.equal([])
      } finally {
        await service.close()
      }
    },
  )

  it('makes no embedded TSA for a store stamped by an external TSA', async () => {
    const [ca] = splitCertificates([(await createTsaMaterial({commonName: 'External'})).caCertPem])
    await writeFile(path.join(dir, EXTERNAL_ANCHORS_FILE), ca!)
    const service = await startService({dataDir: dir, host: '127.0.0.1', port: 0})
    try {
      expect(existsSync(path.join(dir, 'tsa'))).to.equal(false)
      expect(await (await fetch(`${service.url}/v1/timestamps/ca`)).text()).to.equal(ca)
    } finally {
      await service.close()
    }
  })
})
