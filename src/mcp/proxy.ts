/**
 * The parts of `audit-trail mcp-proxy` that both transports share, put together once: the event
 * queue of the chosen log, the sender, the policy gate and the observer.
 */
import os from 'node:os'
import path from 'node:path'
import {sha256Hex} from '../core/crypto.js'
import {EventQueue} from './record/event-queue.js'
import type {LogDestination} from './record/log-destination.js'
import type {Notes} from './notes.js'
import {McpObserver} from './record/observer.js'
import {HoldDesk} from './gate/oversight.js'
import type {PolicyGate} from './gate/policy-gate.js'
import {Recorder} from './record/recorder.js'
import {ToolDefinitionWatch} from './record/tool-definitions.js'

interface ProxyOptions {
  destination: LogDestination
  /** Where the queue and the last tool definitions seen are kept. */
  stateDir: string
  policy?: PolicyGate
  /** How long a held call waits for a decision (`--hold-timeout`, docs/oversight.md). */
  holdTimeoutMs: number
  /** What this proxy relays to (the server's command line or upstream URL): with the log, it names the proxy. */
  relaysTo: string
  requireLog: boolean
  queueLimit: number
  recordLimit: number
  notes: Notes
}

export interface ProxyCore {
  observer: McpObserver
  recorder: Recorder
  /** Answers every held call with an error and closes its approval (the proxy stops). */
  release(): Promise<void>
  /** Sends what is queued (at most `timeoutMs`), says what is left, and stops. */
  close(timeoutMs: number): Promise<void>
}

/** `$XDG_STATE_HOME/audit-trail/mcp`, by default `~/.local/state/audit-trail/mcp`. */
export function defaultStateDir(): string {
  const base = process.env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state')
  return path.join(base, 'audit-trail', 'mcp')
}

export async function openProxyCore(options: ProxyOptions): Promise<ProxyCore> {
  const {destination, notes} = options
  const note = (line: string, kind?: string) => notes.say(line, kind)
  const queue = await EventQueue.open(path.join(options.stateDir, 'queue', destination.key), {
    limit: options.queueLimit,
    describe: destination.description,
    onProblem: note,
  })
  if (queue.backlogEvents > 0)
    note(`${queue.backlogEvents} event(s) of an earlier run wait in ${queue.dir}; they are sent first`)
  const recorder = new Recorder({queue, destination, requireLog: options.requireLog, note})
  recorder.start()
  // Held calls record their approval at once, outside the queue: nobody could decide on a queued one.
  const heldBy = sha256Hex(JSON.stringify([options.stateDir, destination.key, options.relaysTo])).slice(0, 16)
  const desk = options.policy?.holds
    ? new HoldDesk({open: () => destination.open(), timeoutMs: options.holdTimeoutMs, heldBy, note})
    : undefined
  // In the background: the relay starts at once, and a log that is away is said once, not fatal.
  void desk?.recover().catch((error: unknown) => {
    note(`cannot look for calls an earlier run left held: ${(error as Error).message}`, 'approval')
  })
  const observer = new McpObserver({
    recorder,
    policy: options.policy,
    desk,
    tools: new ToolDefinitionWatch(path.join(options.stateDir, 'tools')),
    recordLimit: options.recordLimit,
    note,
  })
  return {
    observer,
    recorder,
    release: async () => desk?.close(),
    async close(timeoutMs) {
      await desk?.close()
      await observer.settled()
      const left = await recorder.close(timeoutMs)
      if (left > 0)
        note(
          `${left} event(s) could not be sent to ${destination.description} yet; they wait in ${queue.dir} ` +
            'for the next mcp-proxy of the same log',
        )
      notes.summarise()
    },
  }
}
