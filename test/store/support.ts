/**
 * Shared pieces of the store tests: temporary data directories, stored events shaped like the
 * ingest service makes them (index, sequence and prev_hash chained per agent), and child processes.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import {fileURLToPath} from 'node:url'
import {GENESIS_HASH, type StoredEvent} from '../../src/core/types.js'

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'atrail-store-'))
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, {recursive: true, force: true})
}

/** A 64-hex "hash" that names the event, so a test can tell which event a hash came from. */
export function fakeHash(index: number): string {
  return index.toString(16).padStart(64, 'f')
}

export function eventId(index: number): string {
  return `0190a000-0000-7000-8000-${index.toString(16).padStart(12, '0')}`
}

/** Builds events in index order; per-agent sequences and prev_hash links are kept consistent. */
export class EventMaker {
  #next = 0
  readonly #heads = new Map<string, {sequence: number; hash: string}>()

  constructor(start = 0) {
    this.#next = start
  }

  make(fields: Partial<StoredEvent> = {}): StoredEvent {
    const index = this.#next++
    const agentId = fields.agent_id ?? `agent-${index % 3}`
    const head = this.#heads.get(agentId)
    const event: StoredEvent = {
      id: eventId(index),
      agent_id: agentId,
      action_type: 'TOOL_CALL',
      action_name: 'read_file',
      action_status: 'success',
      timestamp: new Date(Date.UTC(2026, 0, 1) + index * 1000).toISOString(),
      labels: {},
      ...fields,
      sequence: (head?.sequence ?? 0) + 1,
      prev_hash: head?.hash ?? GENESIS_HASH,
      recorded_at: fields.recorded_at ?? new Date(Date.UTC(2026, 0, 2) + index * 1000).toISOString(),
      hash: fakeHash(index),
      index,
    }
    this.#heads.set(agentId, {sequence: event.sequence, hash: event.hash})
    return event
  }

  many(count: number, fields: (i: number) => Partial<StoredEvent> = () => ({})): StoredEvent[] {
    return Array.from({length: count}, (_, i) => this.make(fields(i)))
  }
}

const here = path.dirname(fileURLToPath(import.meta.url))

/** Starts `node --import tsx test/store/fixtures/<script>` with arguments. */
export function spawnFixture(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(here, 'fixtures', script), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** Resolves with the first stdout line of a child that matches, rejecting if it exits first. */
export function waitForLine(child: ChildProcess, matches: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = ''
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      const line = lines.find(matches)
      if (line !== undefined) {
        child.stdout!.off('data', onData)
        resolve(line)
      }
    }
    child.stdout!.on('data', onData)
    child.once('exit', (code) => reject(new Error(`child exited with ${code}: ${stderr}`)))
  })
}

/** Resolves once the child exited and its output is fully read. */
export function waitForExit(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if ((child.exitCode !== null || child.signalCode !== null) && child.stdout?.readableEnded !== false) resolve()
    else child.once('close', () => resolve())
  })
}
