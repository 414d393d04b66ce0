/**
 * Starts the whole service: the services on a data directory, the Koa app, the WebSocket stream
 * on the same http.Server, and periodic timestamping. `serve` and the end-to-end tests call this.
 */
import type {ApiKey} from '../core/auth/keys.js'
import {AgentDirectory} from '../core/otlp/agents.js'
import type {AuditOptions, AuditServices} from '../services/audit.js'
import {openTrails} from '../services/trail-registry.js'
import type {Trails} from '../services/trails.js'
import type {AppOptions} from './app.js'
import type {RunningGrpc} from './grpc.js'
import {authenticateUpgrade} from './middleware/auth.js'
import {listen, type ConnectionLimits} from './server.js'
import {attachStream, type StreamOptions} from './stream.js'
import {toHex} from '../core/hex.js'
import {PayloadRetention} from '../services/retention.js'
import {ForwardingService, type ForwardedTrail, type ForwardingOptions} from '../services/forwarding/index.js'
import {forwardingRoutes} from './routes/forwarding.js'
import {resolveTrail} from './trail-access.js'
import {DEFAULT_TRAIL} from '../core/trail/name.js'
import {createTrailsApp} from './trails-app.js'

interface ServiceOptions extends AuditOptions {
  host: string
  port: number
  apiKeys?: readonly ApiKey[]
  /** Anchor the root this often (ms) when the tree has grown since the last timestamp. */
  timestampEveryMs?: number
  stream?: Omit<StreamOptions, 'authenticate'>
  limits?: ConnectionLimits
  app?: Omit<AppOptions, 'apiKeys'>
  onTimestampError?: (error: unknown) => void
  /** Also serve OTLP/gRPC (traces and logs) on this port of `host` (0: any free port). */
  otlpGrpcPort?: number
  /** How often a checkpoint is signed when the tree grew (C2SP tlog-checkpoint; 1000 ms). */
  checkpointEveryMs?: number
  /** Erase the payload of events recorded longer ago than this (ms; `--payload-retention`, docs/erasure.md). */
  payloadRetentionMs?: number
  /** `serve --forward`: destinations that receive every event of every trail (docs/forwarding.md). */
  forwarding?: Omit<ForwardingOptions, 'store' | 'feed' | 'trails'>
}

export interface RunningService {
  url: string
  /** The port OTLP/gRPC listens on, when `otlpGrpcPort` was given. */
  otlpGrpcPort?: number
  /** The trail `default`'s services. */
  services: AuditServices
  trails: Trails
  forwarding: ForwardingService
  close(): Promise<void>
}

/**
 * Verifies every chain once in the background, so the first /v1/agents or /v1/stats does not wait
 * for it (afterwards the status follows the store incrementally); then reads the event headers a
 * policy check needs into memory, for the same reason (not from a database server: store.ts, onServer).
 * And hands the latest checkpoint to the witnesses.
 */
function warmUp(
  services: AuditServices,
  closing: () => boolean,
  report: (what: string) => (error: unknown) => void,
): void {
  void services.integrity
    .chainStatus()
    .catch(report('chain verification'))
    // Then whether the stored events still extend every timestamp, for /healthz (signed-history.ts).
    .then(() => (closing() ? undefined : services.timestamps.checkHistory()))
    .then((rewrite) => rewrite && console.error(`audit-trail: ${rewrite.message}`), report('checking signed history'))
    .then(() => (closing() || services.store.onServer ? undefined : services.policy.warm()))
    .catch(report('reading event headers'))
    .then(() => (closing() ? undefined : services.store.prepareSearch()))
    .catch(report('search index'))
  // Witnesses may have missed the latest checkpoint while the log was down.
  void services.checkpoints
    .latest()
    .then(
      (latest) => latest && services.witnesses.forEach((w) => w.submit(latest)),
      report('reading the latest checkpoint'),
    )
}

/** Timestamps the root every `timestampEveryMs` when it changed since the latest timestamp. */
function timestampTimer(services: AuditServices, options: ServiceOptions): NodeJS.Timeout | undefined {
  const everyMs = options.timestampEveryMs
  if (!everyMs) return undefined
  const onError =
    options.onTimestampError ??
    ((error: unknown) => console.error('audit-trail: periodic timestamp failed:', (error as Error).message))
  const timer = setInterval(() => {
    void (async () => {
      await services.refresh()
      // Whenever the root changed: grown, or rewritten (then issue refuses, one log line a period).
      const latest = await services.timestamps.latest()
      const [root, size] = await services.tree.read((tree, size) => [toHex(tree.rootAt(size)), size] as const)
      if (latest ? latest.merkle_root === root : size === 0) return
      // Processes sharing a database take turns: a little under the period, as timers drift.
      if ((await services.store.claimTurn?.('timestamp', everyMs * 0.9)) ?? true) await services.timestamps.issue()
    })().catch(onError)
  }, everyMs)
  timer.unref()
  return timer
}

/**
 * Signs a checkpoint when the tree grew, at most once per interval; a refusal (the tree no longer
 * extends the last signed checkpoint) is reported once and never papered over by signing something else.
 */
function checkpointSigning(services: AuditServices, everyMs: number, closing: () => boolean): NodeJS.Timeout {
  let failure = ''
  const sign = () =>
    void services.checkpoints.signIfGrown().then(
      () => {
        failure = ''
      },
      (error: unknown) => {
        const message = (error as Error).message
        if (!closing() && message !== failure) console.error('audit-trail: checkpoint not signed:', message)
        failure = message
      },
    )
  const timer = setInterval(sign, everyMs)
  timer.unref()
  return timer
}

/** OTLP/gRPC on `otlpGrpcPort`, when given. */
async function startGrpc(
  trails: Trails,
  options: ServiceOptions,
  agentsOf: (trail: string) => AgentDirectory,
): Promise<RunningGrpc | undefined> {
  if (options.otlpGrpcPort === undefined) return undefined
  // Loaded only when asked for: every CLI command loads this module (oclif finds commands by
  // loading them), and none but `serve --otlp-grpc-port` needs grpc-js.
  const {startOtlpGrpc} = await import('./grpc.js')
  return startOtlpGrpc({
    host: options.host,
    port: options.otlpGrpcPort,
    trails: async (named, key) => {
      const {name, services} = await resolveTrail(trails, key, named)
      return {recorder: services.ingest, agents: agentsOf(name)}
    },
    apiKeys: options.apiKeys,
    logError: (error) => console.error('audit-trail: OTLP/gRPC request failed:', (error as Error).message),
  })
}

/** `--payload-retention`: erases payloads older than the period, when given (docs/erasure.md). */
function payloadRetention(services: AuditServices, options: ServiceOptions): PayloadRetention | undefined {
  if (options.payloadRetentionMs === undefined) return undefined
  const retention = new PayloadRetention({
    store: services.store,
    erasure: services.erasure,
    retentionMs: options.payloadRetentionMs,
  })
  retention.start()
  return retention
}

/**
 * What runs in the background for each trail this process opened: chain verification and the
 * other warm-up work, timestamps, checkpoints, payload retention, and its feed waking the senders.
 */
class TrailWork {
  closing = false
  readonly #stops: Array<() => Promise<void> | void> = []

  constructor(private readonly options: ServiceOptions) {}

  readonly report = (what: string) => (error: unknown) => {
    if (!this.closing) console.error(`audit-trail: ${what} failed:`, (error as Error).message)
  }

  start(services: AuditServices, forwarding: ForwardingService): void {
    if (this.closing) return
    warmUp(services, () => this.closing, this.report)
    const timer = timestampTimer(services, this.options)
    const checkpointTimer = checkpointSigning(services, this.options.checkpointEveryMs ?? 1000, () => this.closing)
    const retention = payloadRetention(services, this.options)
    forwarding.watch(services.feed)
    this.#stops.push(async () => {
      if (timer) clearInterval(timer)
      clearInterval(checkpointTimer)
      await retention?.stop()
    })
  }

  async stop(): Promise<void> {
    this.closing = true
    for (const stop of this.#stops) await stop()
  }
}

/** Every trail, each opened on first use (forwarding sends every trail's events, those created while serving too). */
async function everyTrail(trails: Trails): Promise<ForwardedTrail[]> {
  const names = await trails.names()
  return Promise.all(names.map(async (name) => ({name, store: (await trails.open(name)).store})))
}

/** The embedded TSA's anchor and the log key made now: a bad --origin stops start-up, not the first checkpoint. */
async function prepare(services: AuditServices): Promise<void> {
  // The embedded TSA is made now rather than at the first timestamp, so that a served data
  // directory holds `tsa/` with the trust anchor to hand an auditor from the start (docs/design.md,
  // The store). Not for a store stamped by an external TSA, nor with --tsa-url (anchors.ts).
  await services.timestamps.trustAnchorsPem()
  await services.checkpoints.identity()
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const trails = await openTrails({
    onError: (error) => console.error('audit-trail: after recording events:', (error as Error).message),
    ...options,
  })
  const services = trails.default
  let running
  let grpc: RunningGrpc | undefined
  const agents = new Map<string, AgentDirectory>()
  const agentsOf = (name: string) => agents.get(name) ?? agents.set(name, new AgentDirectory()).get(name)!
  const forwarding = new ForwardingService({
    destinations: [],
    ...options.forwarding,
    store: services.store,
    feed: services.feed,
    trails: () => everyTrail(trails),
  })
  try {
    await prepare(services)
    const extraRouters = [forwardingRoutes((only) => forwarding.status(only)), ...(options.app?.extraRouters ?? [])]
    const app = createTrailsApp(trails, {
      otlpAgentsOf: agentsOf,
      ...options.app,
      extraRouters,
      apiKeys: options.apiKeys,
    })
    grpc = await startGrpc(trails, options, agentsOf)
    running = await listen(app, options.host, options.port, options.limits)
  } catch (error) {
    await grpc?.close()
    await trails.close()
    throw error
  }
  const work = new TrailWork(options)
  work.start(services, forwarding)
  trails.onOpen((name, opened) => {
    if (name !== DEFAULT_TRAIL) work.start(opened, forwarding)
  })
  const stream = attachStream(running.server, async (named, key) => (await resolveTrail(trails, key, named)).services, {
    ...options.stream,
    authenticate: options.apiKeys ? authenticateUpgrade(options.apiKeys) : undefined,
  })
  forwarding.start()
  return {
    url: running.url,
    otlpGrpcPort: grpc?.port,
    services,
    trails,
    forwarding,
    async close() {
      await work.stop()
      await forwarding.close()
      stream.close()
      await grpc?.close()
      await running.close()
      await trails.close()
    },
  }
}
