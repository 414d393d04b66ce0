import {spawnSync} from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import {expect} from 'chai'
import type {CheckpointRecord} from '../../src/core/types.js'
import {openSqlJsStore} from '../../src/store/index.js'
import {EventMaker, removeDir, tempDir} from './support.js'

/** The data directory as a process killed now would leave it: the journals, then the snapshot. */
function crashCopy(dir: string): string {
  const copy = tempDir()
  for (const name of [
    ...fs
      .readdirSync(dir)
      .filter((n) => n.startsWith('journal-'))
      .sort(),
    'events.sqlite',
  ]) {
    if (fs.existsSync(path.join(dir, name))) fs.copyFileSync(path.join(dir, name), path.join(copy, name))
  }
  return copy
}

const checkpoint = (size: number): CheckpointRecord => ({
  tree_size: size,
  root: 'ab'.repeat(32),
  note: `log.test/store\n${size}\nq6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=\n\n\u2014 log.test/store AAAA\n`,
  cosignatures: [],
  signed_at: '2026-11-26T00:00:00.000Z',
})

describe('sql.js store: checkpoints and cosignatures', () => {
  const dirs: string[] = []
  afterEach(() => {
    while (dirs.length > 0) removeDir(dirs.pop()!)
  })

  it('journals checkpoints and cosignatures, so a crash before the snapshot keeps them', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const store = await openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})
    await store.appendEvents(new EventMaker().many(3))
    await store.appendCheckpoint(checkpoint(3))
    await store.appendCosignatures(3, ['\u2014 w1 AAAA\n'])
    await store.appendCosignatures(3, ['\u2014 w1 AAAA\n', '\u2014 w2 BBBB\n'])
    const copy = crashCopy(dir)
    dirs.push(copy)
    await store.close()
    const recovered = await openSqlJsStore({dataDir: copy, snapshotIntervalMs: 0})
    expect(await recovered.listCheckpoints()).to.deep.equal([
      {...checkpoint(3), cosignatures: ['\u2014 w1 AAAA\n', '\u2014 w2 BBBB\n']},
    ])
    expect((await recovered.latestCheckpoint())?.tree_size).to.equal(3)
    const missing = await recovered.appendCosignatures(4, ['\u2014 w1 AAAA\n']).then(
      () => undefined,
      (e: unknown) => e as {code: string},
    )
    expect(missing?.code).to.equal('not_found')
    await recovered.snapshot()
    await recovered.close()
    const cli = spawnSync(
      'sqlite3',
      [path.join(copy, 'events.sqlite'), 'select tree_size, cosignatures from checkpoints'],
      {encoding: 'utf8'},
    )
    expect(cli.stdout).to.equal('3|["— w1 AAAA\\n","— w2 BBBB\\n"]\n')
  })

  it('creates the log key once, through a staging directory, mode 0600', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const store = await openSqlJsStore({dataDir: dir, snapshotIntervalMs: 0})
    let made = 0
    const keys = await Promise.all([1, 2, 3].map(() => store.logKey(() => `key ${++made}\n`)))
    expect(new Set(keys).size).to.equal(1)
    expect(await store.logKey(() => 'another\n')).to.equal(keys[0])
    expect(fs.statSync(path.join(dir, 'log', 'log.key')).mode & 0o777).to.equal(0o600)
    expect(fs.readdirSync(dir).filter((name) => name.startsWith('.log-'))).to.deep.equal([])
    await store.close()
  })
})
