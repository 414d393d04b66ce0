/**
 * What a client of the approvals needs besides requests (docs/oversight.md): the approval events
 * as they are recorded, over the server's stream, and who decides at a terminal on a store.
 */
import os from 'node:os'
import WebSocket from 'ws'
import {APPROVALS_AGENT, type ApprovalView} from '../core/approval/index.js'
import type {StoredEvent} from '../core/types.js'
import {onTrail} from './server-url.js'

export type ApprovalEventListener = (event: StoredEvent) => void

/** How long to wait before connecting again after the stream closed. */
const RECONNECT_MS = 500

/**
 * Follows `audit-trail:approvals` on the server's stream (docs/api.md, Real-time), resuming after
 * the last event seen when the connection drops, until stopped. Resolves once the first
 * connection is open (events recorded from then on are delivered), or rejects when it fails.
 */
export function watchApprovalEvents(
  base: string,
  apiKey: string | undefined,
  listener: ApprovalEventListener,
  trail?: string,
): Promise<() => void> {
  let stopped = false
  /** A stream that never opened is not retried: the caller is told instead. */
  let opened = false
  let socket: WebSocket | undefined
  let next: number | undefined
  const connect = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const url = new URL(`${base.replace(/^http/, 'ws')}${onTrail('/v1/stream', trail)}`)
      url.searchParams.set('agent_id', APPROVALS_AGENT)
      if (next !== undefined) url.searchParams.set('from_index', String(next))
      const ws = new WebSocket(url, {headers: apiKey ? {authorization: `Bearer ${apiKey}`} : {}})
      socket = ws
      ws.on('message', (data) => {
        const message = JSON.parse(String(data)) as {type: string; event?: StoredEvent; tree_size?: number}
        if (message.type === 'hello') next ??= message.tree_size
        if (message.type !== 'event' || message.event === undefined) return
        next = message.event.index + 1
        listener(message.event)
      })
      ws.once('open', () => {
        opened = true
        resolve()
      })
      ws.once('error', reject)
      ws.on('close', () => {
        if (!stopped && opened) setTimeout(() => void connect().catch(() => undefined), RECONNECT_MS).unref()
      })
    })
  return connect().then(() => () => {
    stopped = true
    socket?.close()
  })
}

/** Who decides with `approvals approve` on a store opened directly: the account at the terminal. */
export function localDecider(): string {
  return `${os.userInfo().username}@${os.hostname()}`
}

/** `approval <id> (billing-bot: payments.refund) approved by alice`: what a decision command says. */
export function decisionLine(approval: ApprovalView): string {
  const by = approval.decision ? ` by ${approval.decision.decided_by}` : ''
  return `approval ${approval.id} (${approval.agent_id}: ${approval.action_name}) ${approval.state}${by}`
}
