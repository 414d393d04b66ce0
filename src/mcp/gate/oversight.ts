/**
 * Holding a call for a person's decision (docs/oversight.md): the request is recorded through the
 * log's approvals API (`POST /v1/approvals`, or the store's service), and the decision comes back
 * over the log's stream (the server's WebSocket, or the database's notifications), so a waiting
 * call goes on as soon as it is recorded. Nobody deciding within the hold timeout, a client that
 * gives up and a proxy that stops each close the approval themselves, with that outcome.
 */
import type {AuditClient} from '../../cli/client.js'
import {
  APPROVAL_GRANTED,
  APPROVALS_AGENT,
  type ApprovalOutcome,
  type ApprovalView,
  type HeldCall,
} from '../../core/approval/index.js'
import {formatDuration} from '../../core/policy/index.js'
import type {StoredEvent} from '../../core/types.js'
import {AuditError} from '../../core/errors.js'

/** How a hold ended; `unavailable`: the request could not be recorded, so nobody could decide. */
export interface HoldOutcome {
  outcome: ApprovalOutcome | 'unavailable'
  reason: string | null
  decidedBy: string | null
  approvalId?: string
  decisionEventId?: string
}

/** Why the proxy stops waiting on its own: the client gave up, or the proxy stops. */
export type Release = 'cancelled' | 'abandoned'

interface DeskOptions {
  /** Opens the client of the log (a server, or a database others can decide on). */
  open(): Promise<AuditClient>
  timeoutMs: number
  /** Names this proxy in its requests (`held_by`): the same proxy started again finds them. */
  heldBy: string
  note(line: string, kind?: string): void
}

/** How long a stopping proxy waits for its held calls' approvals to be closed. */
const CLOSE_WAIT_MS = 5_000

/** Decisions seen before their waiter registered (decided between the request's answer and the wait). */
const EARLY_DECISIONS = 256

function decisionOf(event: StoredEvent): HoldOutcome {
  const labels = event.labels ?? {}
  const outcome = (labels.outcome as ApprovalOutcome | undefined) ?? 'denied'
  return {
    outcome: event.action_type === APPROVAL_GRANTED ? 'approved' : outcome,
    reason: labels.reason ?? null,
    decidedBy: labels.decided_by ?? null,
    approvalId: event.parent_id,
    decisionEventId: event.id,
  }
}

function fromView(approval: ApprovalView): HoldOutcome {
  const decision = approval.decision!
  return {
    outcome: decision.outcome,
    reason: decision.reason,
    decidedBy: decision.decided_by,
    approvalId: approval.id,
    decisionEventId: decision.event_id,
  }
}

export class HoldDesk {
  readonly #options: DeskOptions
  #client: Promise<AuditClient> | undefined
  #stopWatching: (() => void) | undefined
  readonly #waiting = new Map<string, (outcome: HoldOutcome) => void>()
  readonly #early = new Map<string, HoldOutcome>()
  /** Every hold in progress, so that a stopping proxy releases them all. */
  readonly #holds = new Set<AbortController>()
  #recovering: Promise<unknown> = Promise.resolve()

  constructor(options: DeskOptions) {
    this.#options = options
  }

  get timeoutMs(): number {
    return this.#options.timeoutMs
  }

  #open(): Promise<AuditClient> {
    this.#client ??= (async () => {
      const client = await this.#options.open()
      this.#stopWatching = await client.watchApprovals((event) => this.#seen(event))
      return client
    })().catch((error: unknown) => {
      this.#client = undefined
      throw error
    })
    return this.#client
  }

  #seen(event: StoredEvent): void {
    if (event.agent_id !== APPROVALS_AGENT || event.action_type === 'APPROVAL_REQUESTED') return
    const decision = decisionOf(event)
    const waiter = this.#waiting.get(decision.approvalId ?? '')
    if (waiter) return waiter(decision)
    this.#early.set(decision.approvalId ?? '', decision)
    if (this.#early.size > EARLY_DECISIONS) this.#early.delete(this.#early.keys().next().value!)
  }

  /** Records the request for `call`, then waits for its decision, the timeout, or `signal`. */
  async hold(call: Omit<HeldCall, 'expires_at'>, signal: AbortSignal): Promise<HoldOutcome> {
    const control = new AbortController()
    const release = () => control.abort(signal.reason)
    signal.addEventListener('abort', release, {once: true})
    this.#holds.add(control)
    try {
      let client: AuditClient
      let approval: ApprovalView
      try {
        await this.#recovering.catch(() => undefined)
        client = await this.#open()
        const expires = new Date(Date.now() + this.#options.timeoutMs).toISOString()
        approval = await client.requestApproval({...call, expires_at: expires, held_by: this.#options.heldBy})
      } catch (error) {
        const reason = `the approval could not be requested: ${(error as Error).message}`
        this.#options.note(reason, 'approval')
        return {outcome: 'unavailable', reason, decidedBy: null}
      }
      this.#options.note(
        `${call.action_name} held by rule "${call.rule}": approval ${approval.id} waits for a decision`,
      )
      return await this.#wait(client, approval.id, control.signal)
    } finally {
      signal.removeEventListener('abort', release)
      this.#holds.delete(control)
    }
  }

  async #wait(client: AuditClient, id: string, signal: AbortSignal): Promise<HoldOutcome> {
    let timer: NodeJS.Timeout | undefined
    const ended = await new Promise<HoldOutcome | Release | 'timeout'>((resolve) => {
      const early = this.#early.get(id)
      if (early) return resolve(early)
      this.#waiting.set(id, resolve)
      timer = setTimeout(() => resolve('timeout'), this.#options.timeoutMs)
      if (signal.aborted) resolve(signal.reason as Release)
      signal.addEventListener('abort', () => resolve(signal.reason as Release), {once: true})
    }).finally(() => {
      clearTimeout(timer)
      this.#waiting.delete(id)
      this.#early.delete(id)
    })
    if (typeof ended !== 'string') return ended
    const reason =
      ended === 'timeout'
        ? `nobody decided within ${formatDuration(this.#options.timeoutMs)}`
        : ended === 'cancelled'
          ? 'the client cancelled the call'
          : 'the proxy stopped while the call was held'
    return this.#close(client, id, ended, reason)
  }

  /** Closes the approval with `outcome`; a decision that came first is the one that counts. */
  async #close(client: AuditClient, id: string, outcome: ApprovalOutcome, reason: string): Promise<HoldOutcome> {
    try {
      return fromView(await client.closeApproval(id, {outcome, reason}))
    } catch (error) {
      if (error instanceof AuditError && error.code === 'conflict') return fromView(await client.getApproval(id))
      this.#options.note(`approval ${id} could not be closed as ${outcome}: ${(error as Error).message}`, 'approval')
      return {outcome, reason, decidedBy: null, approvalId: id}
    }
  }

  /**
   * Closes, as `abandoned`, the approvals an earlier run of this proxy left pending (it stopped
   * without closing them: killed, or its machine went down); their calls' clients are gone.
   */
  recover(): Promise<number> {
    // Holds of this run wait for it, so that it never takes one of theirs for one left over.
    const recovering = this.#recover()
    this.#recovering = recovering
    return recovering
  }

  async #recover(): Promise<number> {
    const client = await this.#open()
    const pending = await client.listApprovals({state: 'pending', limit: '1000'})
    const left = pending.filter((approval) => approval.held_by === this.#options.heldBy)
    for (const approval of left)
      await this.#close(client, approval.id, 'abandoned', 'the proxy was restarted while the call was held')
    if (left.length > 0)
      this.#options.note(`${left.length} call(s) held by an earlier run of this proxy closed as abandoned`)
    return left.length
  }

  /** The proxy stops: every held call is released (answered with an error, its approval closed). */
  async close(): Promise<void> {
    for (const control of this.#holds) control.abort('abandoned')
    const deadline = Date.now() + CLOSE_WAIT_MS
    while (this.#holds.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
    this.#stopWatching?.()
    const client = await this.#client?.catch(() => undefined)
    await client?.close()
  }
}
