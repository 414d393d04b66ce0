/**
 * `serve --forward` (docs/forwarding.md): one Forwarder per destination, each woken by the feed
 * when events are recorded (by this process or, on PostgreSQL, another one) and reading them from
 * the store in its own loop.
 */
import {randomBytes} from '../../core/crypto.js'
import type {EventStore} from '../../store/store.js'
import type {Feed} from '../feed.js'
import type {Destination} from './destination.js'
import {Forwarder, type ForwardedTrail} from './forwarder.js'
import {otlpSender, webhookSender} from './http-sender.js'
import type {Sender} from './sender.js'
import {forwardingStatus, type DestinationStatus} from './status.js'
import {SyslogSender} from './syslog-sender.js'

export interface ForwardingOptions {
  /** Where each destination's positions and lease are kept: the store of the trail `default`. */
  store: EventStore
  /** Wakes the senders when events are recorded; the feeds of trails opened later are added with `watch`. */
  feed: Feed
  /** Every trail to forward, in the order they are served; default: only `default`, on `store`. */
  trails?: () => Promise<readonly ForwardedTrail[]>
  destinations: readonly Destination[]
  /** `--forward-header`: sent with every HTTP request (webhooks and OTLP). */
  headers?: readonly [string, string][]
  /** `--forward-ca`, `--forward-cert`, `--forward-key` (PEM): for syslog over TLS. */
  tls?: {ca?: string; cert?: string; key?: string}
  leaseMs?: number
  retry?: {initialMs: number; maxMs: number}
  batchSize?: number
  onError?: (message: string) => void
}

/**
 * The OpenTelemetry Collector's exporter helper starts at 5 s and caps at 30 s; starting at 1 s
 * finds a destination that was down for a moment sooner.
 */
const DEFAULT_RETRY = {initialMs: 1000, maxMs: 30_000}
/** Another process takes a destination over within this long of its sender dying. */
const DEFAULT_LEASE_MS = 5000
const DEFAULT_BATCH = 500

export class ForwardingService {
  readonly forwarders: Forwarder[]
  readonly #wake = () => this.forwarders.forEach((forwarder) => forwarder.wake())
  readonly #feeds = new Set<Feed>()
  readonly #trails: () => Promise<readonly ForwardedTrail[]>

  constructor(private readonly options: ForwardingOptions) {
    const holder = randomBytes(16).toString('hex')
    const only = [{name: 'default', store: options.store}]
    this.#trails = options.trails ?? (async () => only)
    this.forwarders = options.destinations.map(
      (destination) =>
        new Forwarder({
          store: options.store,
          destination,
          sender: this.#senderFor(destination),
          trails: () => this.#trails(),
          holder,
          leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
          retry: options.retry ?? DEFAULT_RETRY,
          batchSize: options.batchSize ?? DEFAULT_BATCH,
          onError: options.onError ?? ((message) => console.error(`audit-trail: ${message}`)),
        }),
    )
  }

  start(): void {
    this.watch(this.options.feed)
    for (const forwarder of this.forwarders) forwarder.start()
  }

  /** The feed of a trail opened while serving: its events wake the senders too. */
  watch(feed: Feed): void {
    if (this.#feeds.has(feed)) return
    this.#feeds.add(feed)
    feed.on('events', this.#wake)
    this.#wake()
  }

  /** Each destination's positions in the trails `only` names (every trail when undefined). */
  async status(only?: readonly string[]): Promise<DestinationStatus[]> {
    const trails = (await this.#trails()).filter((trail) => only === undefined || only.includes(trail.name))
    return forwardingStatus(this.options.store, this.forwarders, {trails})
  }

  async close(): Promise<void> {
    for (const feed of this.#feeds) feed.off('events', this.#wake)
    this.#feeds.clear()
    await Promise.all(this.forwarders.map((forwarder) => forwarder.close()))
  }

  #senderFor(destination: Destination): Sender {
    const {target} = destination
    const http = {href: target.href, headers: this.options.headers ?? []}
    if (destination.kind === 'webhook') return webhookSender(http)
    if (destination.kind === 'otlp') return otlpSender(http)
    return new SyslogSender({host: target.host, port: target.port, tls: target.tls, ...this.options.tls})
  }
}
