/**
 * GET /v1/stream: the live feed over WebSocket on the same http.Server as Koa (docs/api.md
 * section 4, Real-time).
 *
 * No gap, no duplicate: a subscriber attaches to the feed and reads the published size
 * (services/log-follower.ts) in the same tick. Every event below that size was published before
 * (it is in the store), every event at or above it will be published after, whichever process
 * recorded it. Replay reads the store up to that size while live events are
 * held in a queue, then the queue is flushed and the subscriber goes live.
 *
 * Bounded memory: a subscriber whose socket buffer or pending queue passes a bound is closed with
 * 1013 (try again later); it resumes with `from_index`. A replay reads REPLAY_BATCH events at a
 * time and hands the socket at most REPLAY_IN_FLIGHT messages or REPLAY_BUFFERED_BYTES; at most
 * `maxReplays` replays run at once, `maxWaitingReplays` more wait their turn, and the next one is
 * closed with 1013. A subscriber that does not answer a heartbeat ping (one that does not read)
 * is closed with 1013 at the next heartbeat; a closed subscriber leaves the feed at once, and ws
 * destroys a socket whose close is not answered 30 s later.
 */
import type http from 'node:http'
import {WebSocketServer, type WebSocket} from 'ws'
import {inScope, type AgentScope} from '../core/auth/agent-scope.js'
import type {StoredEvent} from '../core/types.js'
import type {AuditServices} from '../services/audit.js'
import type {FeedEvents} from '../services/feed.js'
import {toHex} from '../core/hex.js'
import {
  refuse,
  singleLog,
  upgradeOf,
  type StreamAuthenticator,
  type StreamQuery,
  type StreamTrails,
  type Upgrade,
} from './stream-upgrade.js'

export type {StreamTrails} from './stream-upgrade.js'

export interface StreamOptions {
  /** Close a subscriber whose unsent bytes exceed this (default 8 MiB). */
  maxBufferedBytes?: number
  /** Close a subscriber whose queued (not yet handed to the socket) events exceed this (default 50,000). */
  maxQueuedEvents?: number
  /** Replays running at once (default 16); more wait their turn. */
  maxReplays?: number
  /** Replays waiting their turn (default 256); the next subscriber asking for one is closed with 1013. */
  maxWaitingReplays?: number
  /** Ping every subscriber this often (default 30 s); one that did not answer the last ping is closed with 1013. */
  heartbeatMs?: number
  /** The request's key; throws AuditError('unauthorized' | 'forbidden') to refuse the upgrade. */
  authenticate?: StreamAuthenticator
}

const CLOSE_TRY_AGAIN_LATER = 1013
const CLOSE_INTERNAL_ERROR = 1011
/** Events a replay reads from the store per query: all it holds before they are sent. */
const REPLAY_BATCH = 8
const REPLAY_IN_FLIGHT = 64
const REPLAY_BUFFERED_BYTES = 1024 * 1024

/**
 * An event message, UTF-8 encoded (ws sends a Buffer as it is; a string it would encode again for
 * every subscriber). Live delivery encodes each event once per batch, however many subscribers
 * receive it (messageOf); replay, whose events are read afresh for each subscriber, once each.
 */
function eventMessage(event: StoredEvent): Buffer {
  return Buffer.from(`{"type":"event","event":${JSON.stringify(event)}}`)
}

// Messages are kept per feed batch (one weak entry), not per event: fewer entries for the collector.
const messageCache = new WeakMap<readonly StoredEvent[], Array<Buffer | undefined>>()

/** The message of events[i], encoded once for every subscriber of this batch. */
function messageOf(events: readonly StoredEvent[], i: number): Buffer {
  let messages = messageCache.get(events)
  if (messages === undefined) {
    messages = new Array(events.length)
    messageCache.set(events, messages)
  }
  return (messages[i] ??= eventMessage(events[i]!))
}

class Subscriber {
  private live = false
  private queue: StoredEvent[] = []
  private closed = false

  constructor(
    private readonly ws: WebSocket,
    private readonly filter: {agent_id?: string; action_type?: string},
    private readonly scope: AgentScope | undefined,
    private readonly minIndex: number,
    private readonly limits: {maxBufferedBytes: number; maxQueuedEvents: number},
  ) {}

  matches(event: StoredEvent): boolean {
    return (
      event.index >= this.minIndex &&
      (this.filter.agent_id === undefined || event.agent_id === this.filter.agent_id) &&
      (this.filter.action_type === undefined || event.action_type === this.filter.action_type) &&
      inScope(this.scope, event.agent_id)
    )
  }

  onEvents(events: StoredEvent[]): void {
    if (this.closed) return
    if (!this.live) {
      for (const event of events) if (this.matches(event)) this.queue.push(event)
      if (this.queue.length > this.limits.maxQueuedEvents) this.tooSlow()
      return
    }
    for (let i = 0; i < events.length; i++) {
      if (this.closed) return
      if (this.matches(events[i]!)) this.send(messageOf(events, i))
    }
  }

  send(message: string | Buffer): void {
    if (this.closed) return
    if (this.ws.bufferedAmount > this.limits.maxBufferedBytes) return this.tooSlow()
    this.ws.send(message, {binary: false})
  }

  /** Sends the held live events and switches to live delivery. */
  goLive(): void {
    const held = this.queue
    this.queue = []
    this.live = true
    for (const event of held) this.send(eventMessage(event))
  }

  tooSlow(reason = 'too slow: resume with from_index'): void {
    if (this.closed) return
    this.markClosed()
    // A client that does not read never answers the close: ws destroys its socket after 30 s.
    this.ws.close(CLOSE_TRY_AGAIN_LATER, reason)
  }

  get isClosed(): boolean {
    return this.closed
  }

  /** Once, when the subscriber is closed: it leaves the feed then, not when the socket finally goes. */
  onClosed: () => void = () => {}

  markClosed(): void {
    if (!this.closed) this.onClosed()
    this.closed = true
    this.queue = []
    // A replay waiting for the socket stops, and lets go of the events it read.
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  /**
   * Replay is paced by the socket itself: at most REPLAY_IN_FLIGHT messages, and no more once
   * REPLAY_BUFFERED_BYTES are waiting, are handed to it and not yet written out, so a replay never
   * trips the slow-consumer bound on its own and holds little for a client that stops reading.
   */
  async replay(message: Buffer): Promise<void> {
    const full = () =>
      this.inFlight >= REPLAY_IN_FLIGHT || (this.inFlight > 0 && this.ws.bufferedAmount >= REPLAY_BUFFERED_BYTES)
    while (!this.closed && full()) await new Promise<void>((resolve) => (this.wake = resolve))
    if (this.closed) return
    this.inFlight++
    this.ws.send(message, {binary: false}, () => {
      this.inFlight--
      const wake = this.wake
      this.wake = undefined
      wake?.()
    })
  }

  private inFlight = 0
  private wake: (() => void) | undefined
}

/**
 * The replays that may run at once; the ones after them wait in order, up to a bound. A slot is
 * held from the replay's first read to its last send, released however it ends.
 */
class ReplaySlots {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(
    private readonly max: number,
    private readonly maxWaiting: number,
  ) {}

  /** A promise of a slot, or undefined when too many are already waiting. */
  take(): Promise<void> | undefined {
    if (this.running < this.max) {
      this.running++
      return Promise.resolve()
    }
    if (this.waiting.length >= this.maxWaiting) return undefined
    return new Promise<void>((resolve) => this.waiting.push(resolve))
  }

  release(slot: Promise<void>): void {
    void slot.then(() => {
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    })
  }
}

/** The subscriber gets the feed's events and timestamps until it closes. */
function subscribe(services: AuditServices, subscriber: Subscriber): void {
  const onEvents = (events: StoredEvent[]) => subscriber.onEvents(events)
  const onTimestamp = (...[record]: FeedEvents['timestamp']) =>
    subscriber.send(JSON.stringify({type: 'timestamp', timestamp: record}))
  services.feed.on('events', onEvents)
  services.feed.on('timestamp', onTimestamp)
  subscriber.onClosed = () => {
    services.feed.off('events', onEvents)
    services.feed.off('timestamp', onTimestamp)
  }
}

/**
 * The stored events of [fromIndex, liveFrom) the filter selects, sent in a replay slot; false when
 * the subscriber was closed or refused (too many replays) instead.
 */
async function replayStored(
  services: AuditServices,
  subscriber: Subscriber,
  replays: ReplaySlots,
  query: {filter: StreamQuery['filter']; scope?: AgentScope; fromIndex: number},
  liveFrom: number,
): Promise<boolean> {
  const slot = replays.take()
  if (slot === undefined) {
    subscriber.tooSlow('too many replays in progress: try again later')
    return false
  }
  try {
    await slot
    if (subscriber.isClosed) return false
    const filter = query.scope === undefined ? query.filter : {...query.filter, agents: query.scope.patterns}
    const scan = {filter, fromIndex: query.fromIndex, toIndex: liveFrom, batchSize: REPLAY_BATCH}
    for await (const event of services.store.scanEvents(scan)) {
      if (subscriber.isClosed) return false
      await subscriber.replay(eventMessage(event))
    }
    return true
  } finally {
    replays.release(slot)
  }
}

/** Pings every client each period; one that did not answer the last ping does not read and is dropped. */
function startHeartbeat(
  wss: WebSocketServer,
  alive: WeakMap<WebSocket, boolean>,
  subscribers: WeakMap<WebSocket, Subscriber>,
  everyMs: number,
): NodeJS.Timeout {
  const heartbeat = setInterval(() => {
    for (const ws of wss.clients) {
      if (!alive.get(ws)) {
        // No answer to the last ping: it does not read (RFC 6455 section 5.5.2 asks for a pong).
        const subscriber = subscribers.get(ws)
        if (subscriber) subscriber.tooSlow('no answer to ping: resume with from_index')
        else ws.terminate()
        continue
      }
      alive.set(ws, false)
      ws.ping()
    }
  }, everyMs)
  heartbeat.unref()
  return heartbeat
}

/** Each upgrade request that is accepted becomes a WebSocket handed to `accept`; the others are refused. */
function onUpgrade(
  server: http.Server,
  wss: WebSocketServer,
  authenticate: StreamAuthenticator | undefined,
  trails: StreamTrails,
  accept: (ws: WebSocket, upgrade: Upgrade) => void,
): void {
  server.on('upgrade', (request, socket, head) => {
    void upgradeOf(request, authenticate, trails).then(
      (upgrade) => {
        if ('refusal' in upgrade) return refuse(socket, upgrade.status, upgrade.refusal)
        // The client may have gone while the trail was opened.
        if (socket.destroyed) return
        wss.handleUpgrade(request, socket, head, (ws) => accept(ws, upgrade))
      },
      (error: unknown) => {
        console.error('audit-trail: stream upgrade failed:', (error as Error).message)
        socket.destroy()
      },
    )
  })
}

export function attachStream(
  server: http.Server,
  servicesOrTrails: AuditServices | StreamTrails,
  options: StreamOptions = {},
): {close(): void} {
  const trails = typeof servicesOrTrails === 'function' ? servicesOrTrails : singleLog(servicesOrTrails)
  const limits = {
    maxBufferedBytes: options.maxBufferedBytes ?? 8 * 1024 * 1024,
    maxQueuedEvents: options.maxQueuedEvents ?? 50_000,
  }
  const replays = new ReplaySlots(options.maxReplays ?? 16, options.maxWaitingReplays ?? 256)
  const subscribers = new WeakMap<WebSocket, Subscriber>()
  // No compression: it would deflate every message again for each subscriber.
  const wss = new WebSocketServer({noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false})
  const alive = new WeakMap<WebSocket, boolean>()

  onUpgrade(server, wss, options.authenticate, trails, (ws, upgrade) => accept(ws, upgrade))

  function accept(ws: WebSocket, {query, services}: Upgrade): void {
    serve(ws, query, services).catch((error: unknown) => {
      // The store failed (RFC 6455 7.4.1: 1011, an unexpected condition); the client resumes with from_index.
      console.error('audit-trail: stream replay failed:', (error as Error).message)
      subscribers.get(ws)?.markClosed()
      ws.close(CLOSE_INTERNAL_ERROR, 'the replay failed: resume with from_index')
    })
  }

  async function serve(ws: WebSocket, query: StreamQuery, services: AuditServices): Promise<void> {
    alive.set(ws, true)
    ws.on('pong', () => alive.set(ws, true))
    ws.on('error', () => {})
    const subscriber = new Subscriber(ws, query.filter, query.scope, query.fromIndex ?? 0, limits)
    subscribers.set(ws, subscriber)
    ws.on('close', () => subscriber.markClosed())
    // An event answered 201 before the upgrade may still be on its way to the feed (another turn ran).
    await services.published()
    if (subscriber.isClosed) return
    subscribe(services, subscriber)
    const liveFrom = services.publishedSize()
    const root = toHex(await services.tree.read((tree) => tree.rootAt(liveFrom), liveFrom))
    subscriber.send(JSON.stringify({type: 'hello', tree_size: liveFrom, merkle_root: root}))
    if (query.fromIndex !== undefined && query.fromIndex < liveFrom) {
      const scan = {...query, fromIndex: query.fromIndex}
      if (!(await replayStored(services, subscriber, replays, scan, liveFrom))) return
    }
    subscriber.goLive()
  }

  const heartbeat = startHeartbeat(wss, alive, subscribers, options.heartbeatMs ?? 30_000)

  return {
    close() {
      clearInterval(heartbeat)
      for (const ws of wss.clients) ws.close(1001, 'server shutting down')
      wss.close()
    },
  }
}
