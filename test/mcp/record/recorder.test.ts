import {readdir, readFile, rename} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {LocalClient} from '../../../src/cli/client.js'
import {EventQueue} from '../../../src/mcp/record/event-queue.js'
import {serverDestination, storeDestination} from '../../../src/mcp/record/log-destination.js'
import {Recorder} from '../../../src/mcp/record/recorder.js'
import {removeDir, tempDir} from '../../support/harness.js'
import {deadPid, eventually, startSwitchableLog, type SwitchableLog} from '../../support/mcp.js'

function event(n: number, timestamp = new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString()) {
  return {agent_id: 'agent-q', action_type: 'TOOL_CALL', action_name: `tool-${n}`, timestamp}
}

describe('Recorder (queued events to the log, in order, nothing lost)', function () {
  this.timeout(60_000)
  let state: string
  let log: SwitchableLog
  const notes: string[] = []
  const open = async (requireLog = false) => {
    const destination = serverDestination(log.url, undefined)
    const queue = await EventQueue.open(path.join(state, destination.key))
    const recorder = new Recorder({queue, destination, requireLog, note: (line) => notes.push(line)})
    recorder.start()
    return recorder
  }

  beforeEach(async () => {
    state = await tempDir()
    notes.length = 0
  })
  afterEach(async () => {
    await log?.close()
    await removeDir(state)
  })

  it('sends events in the order they came, with their own times', async () => {
    log = await startSwitchableLog()
    const recorder = await open()
    for (let i = 0; i < 30; i++) recorder.record(event(i))
    expect(await recorder.close(10_000)).to.equal(0)
    const stored = await log.events()
    expect(stored.map((e) => e.action_name)).to.deep.equal(Array.from({length: 30}, (_, i) => `tool-${i}`))
    expect(stored[5]!.timestamp).to.equal('2026-01-01T00:00:05.000Z')
  })

  it('keeps events while the log is away and sends all of them, once and in order, when it is back', async () => {
    log = await startSwitchableLog({startDown: true})
    const recorder = await open(true)
    await eventually(async () => expect(recorder.refusal()).to.match(/cannot record.*--require-log/))
    for (let i = 0; i < 10; i++) recorder.record(event(i))
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(notes.join('\n')).to.match(/the server at .* cannot record .*events wait in/)
    await log.up()
    await eventually(async () => expect(recorder.refusal()).to.equal(undefined))
    for (let i = 10; i < 15; i++) recorder.record(event(i))
    expect(await recorder.close(10_000)).to.equal(0)
    const stored = await log.events()
    expect(stored.map((e) => e.action_name)).to.deep.equal(Array.from({length: 15}, (_, i) => `tool-${i}`))
    expect(stored.map((e) => e.timestamp)).to.deep.equal(stored.map((_, i) => event(i).timestamp))
    expect(notes.join('\n')).to.match(/records again/)
  })

  it('leaves what it could not send on disk, and the next proxy of the same log sends it first', async () => {
    log = await startSwitchableLog({startDown: true})
    const first = await open()
    for (let i = 0; i < 3; i++) first.record(event(i))
    expect(await first.close(300)).to.equal(3)
    // As the next run sees it: the segment's process has exited.
    const dir = path.join(state, serverDestination(log.url, undefined).key)
    const segment = (await readdir(dir)).find((name) => name.endsWith('.ndjson'))!
    const dead = segment.replace(`~${process.pid}~`, `~${deadPid()}~`)
    await rename(path.join(dir, segment), path.join(dir, dead))
    await log.up()
    const next = await open()
    next.record(event(3))
    expect(await next.close(10_000)).to.equal(0)
    expect((await log.events()).map((e) => e.action_name)).to.deep.equal(['tool-0', 'tool-1', 'tool-2', 'tool-3'])
  })

  it('sets aside an event the log refuses for good, and records the others', async () => {
    log = await startSwitchableLog()
    const recorder = await open()
    recorder.record(event(0))
    recorder.record({...event(1), action_type: 'not a type'})
    recorder.record(event(2))
    await recorder.close(10_000)
    expect((await log.events()).map((e) => e.action_name)).to.deep.equal(['tool-0', 'tool-2'])
    const rejected = await readFile(
      path.join(state, serverDestination(log.url, undefined).key, 'rejected.ndjson'),
      'utf8',
    )
    expect(JSON.parse(rejected).event.action_name).to.equal('tool-1')
    expect(notes.join('\n')).to.match(/refused event .* for good/)
  })

  it('records into a data directory, and lets go of it when idle so others can open it', async () => {
    const dataDir = await tempDir()
    try {
      const destination = storeDestination(dataDir, undefined)
      const queue = await EventQueue.open(path.join(state, destination.key))
      const recorder = new Recorder({queue, destination, requireLog: false, note: (line) => notes.push(line)})
      recorder.start()
      recorder.record(event(1))
      // Opened by another process's client while the recorder is idle: the recorder let go of it.
      await eventually(async () => {
        const reader = await LocalClient.open(dataDir)
        try {
          expect((await reader.listEvents({})).events.map((e) => e.action_name)).to.deep.equal(['tool-1'])
        } finally {
          await reader.close()
        }
      })
      recorder.record(event(2))
      expect(await recorder.close(5_000)).to.equal(0)
      const reader = await LocalClient.open(dataDir)
      expect((await reader.listEvents({})).events.map((e) => e.action_name)).to.deep.equal(['tool-1', 'tool-2'])
      await reader.close()
    } finally {
      await removeDir(dataDir)
    }
  })
})
