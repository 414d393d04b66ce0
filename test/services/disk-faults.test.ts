/**
 * Disk trouble (issue 10): when a journal write or fsync fails, ingest answers 503
 * storage_unavailable with a clear log line, acknowledges nothing it did not store, and recovers
 * when writes succeed again. The failure is injected at the store's file layer.
 */
import {expect} from 'chai'
import {makeEvent, removeDir, startTestApi, tempDir, type TestApi} from '../support/harness.js'
import {openAudit} from '../../src/services/audit.js'
import {nodeFileOps} from '../../src/store/index.js'

describe('disk trouble', () => {
  let api: TestApi
  let dataDir: string
  const fault = {write: false, fsync: false}
  const logged: string[] = []
  beforeEach(async () => {
    fault.write = false
    fault.fsync = false
    logged.length = 0
    dataDir = await tempDir()
    api = await startTestApi({
      dataDir,
      audit: {
        store: {
          fileOps: {
            write: (fd, data, position) =>
              fault.write
                ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), {code: 'ENOSPC'}))
                : nodeFileOps.write(fd, data, position),
            fsync: (fd) =>
              fault.fsync
                ? Promise.reject(Object.assign(new Error('EIO: i/o error'), {code: 'EIO'}))
                : nodeFileOps.fsync(fd),
          },
        },
      },
      app: {logError: (error) => logged.push(String(error))},
    })
  })
  afterEach(async () => {
    await removeDir(dataDir)
  })

  for (const kind of ['write', 'fsync'] as const) {
    it(`answers 503 while ${kind} fails, records nothing, and recovers`, async () => {
      const ok = await api.request('POST', '/v1/events', {body: makeEvent()})
      expect(ok.status).to.equal(201)
      fault[kind] = true
      const failed = await Promise.all([
        api.request('POST', '/v1/events', {body: makeEvent()}),
        api.request('POST', '/v1/batch', {body: [makeEvent(), makeEvent()]}),
      ])
      for (const res of failed) {
        expect(res.status).to.equal(503)
        expect(res.body.error.code).to.equal('storage_unavailable')
      }
      expect(logged.join('\n')).to.match(/storage_unavailable|journal/)
      expect((await api.request('GET', '/v1/events')).body).to.have.length(1)
      expect(await api.services.tree.size()).to.equal(1)
      fault[kind] = false
      const after = await api.request('POST', '/v1/batch', {body: [makeEvent(), makeEvent()]})
      expect(after.status).to.equal(201)
      expect(after.body.map((r: any) => [r.event.index, r.event.sequence])).to.deep.equal([
        [1, 2],
        [2, 3],
      ])
      expect((await api.request('GET', '/v1/verify')).body.valid).to.equal(true)
      // Reopen: what is on disk is exactly what was acknowledged.
      await api.close()
      const reopened = await openAudit({dataDir})
      try {
        expect(await reopened.tree.size()).to.equal(3)
        expect((await reopened.integrity.verifyAll()).valid).to.equal(true)
      } finally {
        await reopened.close()
      }
    })
  }
})
