/**
 * The requests of one sender in one session that wait for their response, by id (JSON-RPC 2.0
 * section 5: the response carries the request's id; ids are unique among a sender's pending
 * requests). Cancelled ids are remembered for a while, so that a response still sent after a
 * cancellation (MCP "Cancellation": the receiver SHOULD NOT, but may) is not taken for a stray.
 */
import type {CallRecord} from './call-event.js'
import {idKey, type JsonRpcId} from '../jsonrpc.js'

/** Pending requests per sender and session; past it the oldest is given up as unanswered. */
const MAX_PENDING = 10_000
const REMEMBERED_CANCELLATIONS = 1_000

export class CallTracker {
  readonly #pending = new Map<string, CallRecord>()
  readonly #cancelled = new Set<string>()

  get size(): number {
    return this.#pending.size
  }

  /**
   * Opens `call`; returns the calls it pushes out: an earlier one with the same id (the sender
   * reused it), or the oldest when MAX_PENDING are waiting.
   */
  open(call: CallRecord): CallRecord[] {
    const key = idKey(call.id)
    const displaced: CallRecord[] = []
    const same = this.#pending.get(key)
    if (same) {
      this.#pending.delete(key)
      displaced.push(same)
    }
    if (this.#pending.size >= MAX_PENDING) {
      const [oldestKey, oldest] = this.#pending.entries().next().value as [string, CallRecord]
      this.#pending.delete(oldestKey)
      displaced.push(oldest)
    }
    this.#cancelled.delete(key)
    this.#pending.set(key, call)
    return displaced
  }

  /** The pending call a response with `id` answers, removed; undefined when none waits. */
  settle(id: JsonRpcId): CallRecord | undefined {
    const key = idKey(id)
    const call = this.#pending.get(key)
    if (call) this.#pending.delete(key)
    return call
  }

  /** The pending call `notifications/cancelled` names, removed and remembered as cancelled. */
  cancel(id: JsonRpcId): CallRecord | undefined {
    const key = idKey(id)
    const call = this.settle(id)
    if (call) {
      this.#cancelled.add(key)
      if (this.#cancelled.size > REMEMBERED_CANCELLATIONS)
        this.#cancelled.delete(this.#cancelled.values().next().value!)
    }
    return call
  }

  wasCancelled(id: JsonRpcId): boolean {
    return this.#cancelled.delete(idKey(id))
  }

  /** Every pending call, removed (the session or the connection ended). */
  drain(): CallRecord[] {
    const calls = [...this.#pending.values()]
    this.#pending.clear()
    return calls
  }
}
