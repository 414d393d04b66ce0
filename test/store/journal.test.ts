import {expect} from 'chai'
import * as fs from 'node:fs'
import * as path from 'node:path'
import {AuditError} from '../../src/core/errors.js'
import {fileOps, type FileOps} from '../../src/store/sqljs/file-ops.js'
import {
  encodeRecord,
  Journal,
  journalFile,
  listJournals,
  readJournal,
  type JournalRecord,
} from '../../src/store/sqljs/journal.js'
import {EventMaker, removeDir, tempDir} from './support.js'

function readAll(file: string): {records: JournalRecord[]; good: number} {
  const records: JournalRecord[] = []
  const good = readJournal(file, (r) => records.push(r))
  return {records, good}
}

describe('store journal', () => {
  let dir: string
  const maker = new EventMaker()
  const one = encodeRecord({events: maker.many(2)})
  const two = encodeRecord({
    timestamp: {
      merkle_root: 'ab'.repeat(32),
      tree_size: 2,
      timestamp: '2026-01-01T00:00:00.000Z',
      tsa: 'embedded',
      token: 'AAAA',
    },
  })

  beforeEach(() => {
    dir = tempDir()
  })

  afterEach(() => removeDir(dir))

  it('names generations so that they sort, and lists only journal files', () => {
    fs.writeFileSync(journalFile(dir, 12), '')
    fs.writeFileSync(journalFile(dir, 3), '')
    fs.writeFileSync(path.join(dir, 'journal-x.ndjson'), '')
    fs.writeFileSync(path.join(dir, 'events.sqlite'), '')
    expect(path.basename(journalFile(dir, 3))).to.equal('journal-000003.ndjson')
    expect(listJournals(dir).map((j) => j.generation)).to.deep.equal([3, 12])
  })

  it('reads complete records and ignores a torn final line', () => {
    const file = journalFile(dir, 1)
    fs.writeFileSync(file, Buffer.concat([one, two, one.subarray(0, one.length - 7)]))
    const {records, good} = readAll(file)
    expect(records).to.deep.equal([JSON.parse(one.toString()), JSON.parse(two.toString())])
    expect(good).to.equal(one.length + two.length)
  })

  it('ignores a final line that is complete but not a record (garbage after a crash)', () => {
    const file = journalFile(dir, 1)
    fs.writeFileSync(file, Buffer.concat([one, Buffer.from('\u0000\u0000{"eve\n')]))
    expect(readAll(file)).to.deep.equal({records: [JSON.parse(one.toString())], good: one.length})
    fs.writeFileSync(file, Buffer.concat([one, Buffer.from('[1,2]\n')]))
    expect(readAll(file).good).to.equal(one.length)
  })

  it('refuses a corrupt line followed by more records', () => {
    const file = journalFile(dir, 1)
    fs.writeFileSync(file, Buffer.concat([one, Buffer.from('{oops\n'), two]))
    expect(() => readAll(file)).to.throw(/corrupt at byte \d+/)
  })

  it('reads a record longer than its read buffer (16 MiB)', () => {
    const file = journalFile(dir, 1)
    const big = encodeRecord({events: [new EventMaker().make({input: 'x'.repeat(17 * 1024 * 1024)})]})
    fs.writeFileSync(file, Buffer.concat([one, big, two]))
    const {records, good} = readAll(file)
    expect(records).to.have.length(3)
    expect((records[1] as {events: {input: string}[]}).events[0]!.input).to.have.length(17 * 1024 * 1024)
    expect(good).to.equal(one.length + big.length + two.length)
  })

  it('appends durably, and after a failed write or fsync cuts the file back before the next append', async () => {
    let failWrite = false
    let failFsync = false
    let fsyncs = 0
    const ops: FileOps = fileOps({
      write: async (fd, data, position) => {
        if (!failWrite) return fileOps().write(fd, data, position)
        // A torn write: half of the record reaches the file, then the device fails.
        await fileOps().write(fd, data.subarray(0, data.length >> 1), position)
        throw new Error('EIO: injected write failure')
      },
      fsync: async (fd) => {
        fsyncs++
        if (failFsync) throw new Error('EIO: injected fsync failure')
        return fileOps().fsync(fd)
      },
    })
    const journal = await Journal.create(ops, dir, 1)
    expect(await journal.append(one)).to.equal(0)
    failWrite = true
    const error = await journal.append(two).catch((e: unknown) => e)
    expect(error).to.be.instanceOf(AuditError).with.property('code', 'storage_unavailable')
    expect(fs.statSync(journal.file).size).to.equal(one.length)
    failWrite = false
    failFsync = true
    await journal.append(two).catch(() => undefined)
    failFsync = false
    const before = fsyncs
    expect(await journal.append(two)).to.equal(one.length)
    // The failed fsync left the file possibly longer: the next append truncated and synced first.
    expect(fsyncs - before).to.equal(2)
    await journal.close()
    expect(readAll(journal.file)).to.deep.equal({
      records: [JSON.parse(one.toString()), JSON.parse(two.toString())],
      good: one.length + two.length,
    })
  })

  it('refuses appends while the file cannot be cut back, and recovers once it can', async () => {
    let broken = true
    const ops = fileOps({
      write: async (fd, data, position) => {
        if (broken) {
          await fileOps().write(fd, data.subarray(0, 10), position)
          throw new Error('EIO: injected')
        }
        return fileOps().write(fd, data, position)
      },
      ftruncate: async (fd, length) => {
        if (broken) throw new Error('EIO: cannot truncate')
        return fileOps().ftruncate(fd, length)
      },
    })
    const journal = await Journal.create(ops, dir, 1)
    await journal.append(one).catch(() => undefined)
    await journal.append(one).catch(() => undefined)
    expect(fs.statSync(journal.file).size).to.equal(10)
    broken = false
    await journal.append(two)
    await journal.close()
    expect(fs.readFileSync(journal.file)).to.deep.equal(two)
  })
})
