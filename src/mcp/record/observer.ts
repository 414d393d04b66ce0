/**
 * The proxy's view of the JSON-RPC traffic (docs/mcp.md): pairs each request with its response per
 * session and sender, turns each pair (or cancellation, or refusal) into one event, and asks the
 * gate (gate/refusal.ts) before a client's request is forwarded whether it may go, or is held.
 * It sees parsed copies only; what is relayed is always the bytes the transport received.
 */
import {actionNameOf, callEvent, type CallOutcome, type CallRecord} from './call-event.js'
import {CallTracker} from './call-tracker.js'
import {errorResponse, REFUSAL_CODES, replyText, type Frame, type JsonRpcId, type Message} from '../jsonrpc.js'
import type {OversizedLine} from '../transport/line-framer.js'
import {settleHeld, type HeldDecision} from '../gate/holding.js'
import type {HoldDesk} from '../gate/oversight.js'
import type {PolicyGate} from '../gate/policy-gate.js'
import {refusalOf, type GateOptions, type Refusal} from '../gate/refusal.js'
import type {McpSession} from './session.js'
import {toolsChangedEvent, type ToolDefinitionWatch} from './tool-definitions.js'

const CANCELLED = 'notifications/cancelled'

type Side = 'client' | 'server'

interface ObserverOptions {
  recorder: {record(event: unknown): void; refusal(): string | undefined}
  policy?: PolicyGate
  /** Where calls held by a `"action": "hold"` rule wait for their decision (docs/oversight.md). */
  desk?: HoldDesk
  tools: ToolDefinitionWatch
  recordLimit: number
  /** A line for stderr, about what the proxy saw or did; `kind` groups repeats of one sort. */
  note(line: string, kind?: string): void
}

/** Where calls are paired: one session (stateful era, stdio) or one HTTP exchange (stateless era). */
export class CallScope {
  readonly clientCalls = new CallTracker()
  readonly serverCalls = new CallTracker()
  /** Client requests held for a decision, by id: aborting one releases it as `cancelled`. */
  readonly held = new Map<JsonRpcId, AbortController>()
  constructor(readonly session: McpSession) {}
}

/** Forward the frame, answer it here, or (`held`) wait for a person's decision first. */
type ClientDecision = {forward: true} | {forward: false; reply: string} | {forward: false; held: Promise<HeldDecision>}

/** A JSON-RPC answer the proxy sends in the place of the other side, and to whom. */
export interface StandIn {
  to: Side
  text: string
}

function requestIdOf(params: unknown): JsonRpcId | undefined {
  const id = (params as {requestId?: unknown} | undefined)?.requestId
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}

function reasonOf(params: unknown): string | undefined {
  const reason = (params as {reason?: unknown} | undefined)?.reason
  return typeof reason === 'string' ? reason : undefined
}

export class McpObserver {
  readonly #options: ObserverOptions
  readonly #gate: GateOptions
  /** Events still being made in the background (tool definitions compared with the saved ones). */
  readonly #working = new Set<Promise<void>>()

  constructor(options: ObserverOptions) {
    this.#options = options
    this.#gate = {
      logRefusal: () => options.recorder.refusal(),
      policy: options.policy,
      canHold: options.desk !== undefined,
    }
  }

  /**
   * A frame from the client: whether it may be forwarded, else the error reply the client gets.
   * `mismatch`: why the transport's routing headers disagree with the body (every request refused).
   */
  fromClient(frame: Frame, scope: CallScope, protocolHeader?: string, mismatch?: string): ClientDecision {
    if ('unparsable' in frame) {
      if (this.#options.policy === undefined) {
        this.#options.note(
          `the client sent a message that is not JSON (${frame.unparsable}); forwarded as it is`,
          'json',
        )
        return {forward: true}
      }
      this.#options.note(
        `the client sent a message that is not JSON (${frame.unparsable}); not forwarded (--policy)`,
        'json',
      )
      const error = {code: -32700, message: `Parse error: ${frame.unparsable}`}
      return {forward: false, reply: JSON.stringify(errorResponse(null, error))}
    }
    const now = Date.now()
    const tick = performance.now()
    const calls: Array<{call: CallRecord; refusal?: Refusal}> = []
    for (const message of frame.messages) {
      if (message.kind !== 'request') continue
      scope.session.learnRequest(message.method, message.params)
      const call: CallRecord = {
        direction: 'client',
        id: message.id,
        method: message.method,
        params: message.params,
        startedAt: now,
        startedTick: tick,
        context: scope.session.contextFor(message.params, 'client', protocolHeader),
      }
      calls.push({call, refusal: refusalOf(call, this.#gate, mismatch)})
    }
    const refused = calls.find((c) => c.refusal !== undefined && c.refusal.hold === undefined)
    if (refused) return this.#refuse(calls, refused.refusal!, frame.batch, tick)
    if (calls.some((c) => c.refusal?.hold)) return {forward: false, held: this.#hold(calls, frame, scope)}
    for (const {call} of calls) this.#open(scope.clientCalls, call)
    for (const message of frame.messages) if (message.kind !== 'request') this.#other(message, 'client', scope)
    return {forward: true}
  }

  /** A frame from the server: observed only (it is forwarded whatever it holds). */
  fromServer(frame: Frame, scope: CallScope): void {
    if ('unparsable' in frame) {
      this.#options.note(`the server sent a message that is not JSON (${frame.unparsable}); forwarded as it is`, 'json')
      return
    }
    const now = Date.now()
    const tick = performance.now()
    for (const message of frame.messages) {
      if (message.kind !== 'request') {
        this.#other(message, 'server', scope)
        continue
      }
      const context = scope.session.contextFor(message.params, 'server')
      const call: CallRecord = {
        direction: 'server',
        id: message.id,
        method: message.method,
        params: message.params,
        startedAt: now,
        startedTick: tick,
        context,
      }
      this.#open(scope.serverCalls, call)
    }
  }

  /**
   * A message too large for the proxy. Dropped (stdio, where the SDKs' readers would fail on it):
   * the request it answered (or was) ends as an error, and the side waiting for it gets an error in
   * its place so that its session goes on. Relayed unobserved (`relayed`, a streamed HTTP body):
   * the call it answers is recorded with its size only.
   */
  oversized(from: Side, line: OversizedLine, scope: CallScope, limit: number, relayed = false): StandIn | undefined {
    const what = `a message of ${line.bytes} bytes, more than the ${limit} the proxy relays (--max-message-bytes)`
    const {id, method} = line
    const fate = relayed ? 'relayed without being observed' : 'dropped'
    this.#options.note(`the ${from} sent ${what}; ${fate}${id == null ? '' : ` (id ${JSON.stringify(id)})`}`, 'size')
    if (id === undefined || id === null) return undefined
    const error = {code: REFUSAL_CODES.tooLarge, message: `the ${from} sent ${what}`}
    const standIn = (to: Side): StandIn => ({to, text: JSON.stringify(errorResponse(id, error))})
    if (method !== undefined) {
      const call: CallRecord = {
        direction: from,
        id,
        method,
        params: undefined,
        startedAt: Date.now(),
        startedTick: performance.now(),
        context: scope.session.contextFor(undefined, from),
      }
      if (relayed) {
        this.#open(from === 'client' ? scope.clientCalls : scope.serverCalls, call)
        return undefined
      }
      // A request never delivered: its sender gets the error as its response.
      this.#finish(call, {kind: 'error', error})
      return standIn(from)
    }
    const call = (from === 'server' ? scope.clientCalls : scope.serverCalls).settle(id)
    if (call === undefined) return undefined
    if (relayed) {
      this.#finish(call, {kind: 'unobserved', bytes: line.bytes, limit, error: line.error === true})
      return undefined
    }
    // A response never delivered: the request it answered ends in error, and its sender is told so.
    this.#finish(call, {kind: 'error', error})
    return standIn(from === 'server' ? 'client' : 'server')
  }

  /** Requests of one HTTP exchange that will get no response there: they end as `outcome` says. */
  abandon(scope: CallScope, ids: readonly JsonRpcId[], outcome: 'cancelled' | 'unanswered', reason: string): void {
    for (const id of ids) {
      const call = outcome === 'cancelled' ? scope.clientCalls.cancel(id) : scope.clientCalls.settle(id)
      if (call) this.#finish(call, outcome === 'cancelled' ? {kind: 'cancelled', reason} : {kind: 'unanswered', reason})
    }
  }

  /**
   * Waits for the decisions on the held calls of a frame; when all are approved the frame's calls
   * are opened (and its other messages seen) as for a frame forwarded at once.
   */
  #hold(calls: Array<{call: CallRecord; refusal?: Refusal}>, frame: Frame, scope: CallScope): Promise<HeldDecision> {
    const {desk, recordLimit, note, recorder} = this.#options
    const held = settleHeld(
      calls.map(({call, refusal}) => ({call, rule: refusal?.hold})),
      'batch' in frame && frame.batch,
      {desk: desk!, recordLimit, held: scope.held, note, record: (event) => recorder.record(event)},
    ).then((decision) => {
      if (!decision.forward) return decision
      for (const {call} of calls) this.#open(scope.clientCalls, call)
      if ('messages' in frame)
        for (const message of frame.messages) if (message.kind !== 'request') this.#other(message, 'client', scope)
      return decision
    })
    const settled = held.then(() => undefined)
    this.#working.add(settled)
    void settled.finally(() => this.#working.delete(settled))
    return held
  }

  /** The scope ended (the connection closed, the session was deleted): what still waits ends so. */
  end(scope: CallScope, reason: string): void {
    for (const control of scope.held.values()) control.abort('cancelled')
    for (const call of [...scope.clientCalls.drain(), ...scope.serverCalls.drain()])
      this.#finish(call, {kind: 'unanswered', reason})
  }

  /** Records the event of one call's outcome. */
  #finish(call: CallRecord, outcome: CallOutcome): void {
    this.#options.recorder.record(callEvent(call, outcome, performance.now(), this.#options.recordLimit))
  }

  #open(tracker: CallTracker, call: CallRecord): void {
    for (const displaced of tracker.open(call)) {
      const why = displaced.id === call.id ? 'its id was used again by a new request' : 'too many requests were waiting'
      this.#finish(displaced, {kind: 'unanswered', reason: why})
    }
  }

  /** Answers every request of a refused frame with an error; each is recorded `denied`. */
  #refuse(
    calls: Array<{call: CallRecord; refusal?: Refusal}>,
    first: Refusal,
    batch: boolean,
    tick: number,
  ): ClientDecision {
    const replies = calls.map(({call, refusal}) => {
      const own =
        refusal !== undefined && refusal.hold === undefined
          ? refusal
          : {
              ...first,
              message: `not forwarded: another request of the same batch was ${first.message}`,
            }
      this.#options.note(`${call.method} ${actionNameOf(call.method, call.params)}: ${own.message}`)
      this.#options.recorder.record(
        callEvent(call, {kind: 'denied', message: own.message, refusal: own.refusal}, tick, this.#options.recordLimit),
      )
      return errorResponse(call.id, {code: own.code, message: own.message, data: {audit_trail: own.refusal}})
    })
    return {forward: false, reply: replyText(replies, batch)}
  }

  /** A notification, a response or an invalid message, from `from`. */
  #other(message: Message, from: Side, scope: CallScope): void {
    const own = from === 'client' ? scope.clientCalls : scope.serverCalls
    const other = from === 'client' ? scope.serverCalls : scope.clientCalls
    switch (message.kind) {
      case 'notification': {
        if (message.method !== CANCELLED) return
        const id = requestIdOf(message.params)
        const held = id === undefined || from !== 'client' ? undefined : scope.held.get(id)
        // A held call is released; its approval is closed as cancelled (docs/oversight.md).
        if (held) return held.abort('cancelled')
        const call = id === undefined ? undefined : own.cancel(id)
        if (call) this.#finish(call, {kind: 'cancelled', reason: reasonOf(message.params)})
        return
      }
      case 'result':
      case 'error': {
        if (message.id === null) {
          const text = message.kind === 'error' ? message.error.message : ''
          this.#options.note(`the ${from} sent an error without an id: ${text}`, 'null id')
          return
        }
        const call = other.settle(message.id)
        if (call === undefined) {
          if (!other.wasCancelled(message.id))
            this.#options.note(
              `the ${from} sent a response to an unknown request id ${JSON.stringify(message.id)}; forwarded as it is`,
              'unknown id',
            )
          return
        }
        if (message.kind === 'error') return this.#finish(call, {kind: 'error', error: message.error})
        if (from === 'server' && scope.session.learnResult(call.method, message.result))
          call.context = scope.session.contextFor(call.params, call.direction)
        this.#finish(call, {kind: 'result', result: message.result})
        if (call.method === 'tools/list') this.#watchTools(call, message.result)
        return
      }
      case 'invalid':
        this.#options.note(`the ${from} sent a message that ${message.reason}; forwarded as it is`, 'invalid')
        return
      case 'request':
        return
    }
  }

  /** A `tools/list` answer: an event TOOL_DEFINITIONS_CHANGED when it differs from the last one seen. */
  #watchTools(call: CallRecord, result: unknown): void {
    const server = call.context.labels['mcp.server']!
    const work = this.#options.tools.observe(server, call.params, result).then((change) => {
      if (change)
        this.#options.recorder.record(toolsChangedEvent(call.context, change, result, this.#options.recordLimit))
    })
    const settled = work.catch((error: unknown) => {
      this.#options.note(`cannot compare the tool definitions of ${server}: ${(error as Error).message}`)
    })
    this.#working.add(settled)
    void settled.finally(() => this.#working.delete(settled))
  }

  /** Resolves once the events being made in the background are recorded. */
  async settled(): Promise<void> {
    while (this.#working.size > 0) await Promise.allSettled([...this.#working])
  }
}
