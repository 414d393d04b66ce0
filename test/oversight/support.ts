/**
 * Helpers of the oversight tests: a log service that can be restarted on the same port and data
 * directory (what `serve` does after a restart), the keys, and a policy that holds `echo`.
 */
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import type {StoredEvent} from '../../src/core/types.js'
import {startService, type RunningService} from '../../src/server/start.js'
import type {AuditServices} from '../../src/services/audit.js'
import {removeDir, tempDir} from '../support/harness.js'
import {opened, type Per} from '../support/hooks.js'
import {freePort} from '../support/ports.js'

export const WRITER = 'writer-key-0123456789abcdef'
export const APPROVER = 'approver-key-0123456789abcdef'
const KEYS = parseKeyFile(`${WRITER} read,write\n${APPROVER} read,approve name=alice\n`)

export interface RestartableLog {
  url: string
  services(): AuditServices
  restart(): Promise<void>
  pending(): Promise<Array<{id: string; input?: unknown; call_event_id: string}>>
  decide(id: string, decision: 'approve' | 'deny', reason?: string): Promise<number>
  events(): Promise<StoredEvent[]>
  close(): Promise<void>
}

export async function startRestartableLog(): Promise<RestartableLog> {
  const dataDir = await tempDir()
  let running: RunningService
  // Restarted on the same port: one outside the ephemeral range stays free meanwhile (support/ports.ts).
  const port = await freePort()
  const listen = async () => {
    running = await startService({dataDir, host: '127.0.0.1', port, apiKeys: KEYS, app: {logError: () => undefined}})
  }
  const stop = () => running.close()
  await listen()
  const url = running!.url
  const services = () => running.services
  return {
    url,
    services,
    async restart() {
      await stop()
      await listen()
    },
    pending: () => services().approvals.list({state: 'pending'}),
    async decide(id, decision, reason) {
      const response = await fetch(`${url}/v1/approvals/${id}`, {
        method: 'POST',
        headers: {authorization: `Bearer ${APPROVER}`, 'content-type': 'application/json'},
        body: JSON.stringify(reason === undefined ? {decision} : {decision, reason}),
      })
      return response.status
    },
    async events() {
      return (await services().query.listEvents({limit: '1000'})).events
    },
    async close() {
      await stop()
      await removeDir(dataDir)
    },
  }
}

/** A restartable log for each test of the calling describe (or one for all), closed after. */
export function useRestartableLog(per: Per = 'test'): RestartableLog {
  return opened(startRestartableLog, (log) => log.close(), per)
}

/** A policy file that holds every call of the tool `echo` (and refuses nothing). */
export async function holdingPolicy(dir: string): Promise<string> {
  const file = path.join(dir, 'policy.json')
  const policy = {
    policies: [{name: 'hold-echo', type: 'forbidden_action', match: {action_name: 'echo'}, action: 'hold'}],
  }
  await writeFile(file, JSON.stringify(policy))
  return file
}

export const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
