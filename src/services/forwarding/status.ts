/**
 * Where each forwarding destination stands (`GET /v1/forwarding`, `audit-trail forwarding status`,
 * docs/forwarding.md): read from the stored positions, so that every process on one database
 * answers the same, with what this process knows of the destinations it runs added.
 */
import type {EventStore, ForwardingPosition} from '../../store/store.js'
import type {DestinationKind} from './destination.js'
import type {ForwardedTrail, Forwarder, ForwarderState} from './forwarder.js'

export interface TrailPosition {
  trail: string
  /** Every event below this index was sent (or left out by the filter). */
  position: number
  /** Events recorded at or past `position`, whether the filter takes them or not. */
  lag_events: number
  /** How long ago the oldest of those was recorded, in seconds (0 when there is none). */
  lag_seconds: number
  updated_at: string
}

export interface DestinationStatus {
  id: string
  url: string
  kind: DestinationKind
  filter: string | null
  /**
   * This process's part: `sending`, `idle`, `retrying`, `stopped`, `standby` (another process
   * sends), or `not_running` (a stored position no process here runs).
   */
  state: ForwarderState | 'not_running'
  last_error: {message: string; at: string} | null
  /**
   * The position in the trail `default` (or in the first trail listed, when `default` is not);
   * `lag_events` summed and `lag_seconds` the most over the trails listed.
   */
  position: number
  lag_events: number
  lag_seconds: number
  trails: TrailPosition[]
}

export function kindOfUrl(url: string): DestinationKind {
  if (url.startsWith('syslog+')) return 'syslog'
  return url.startsWith('otlp+') ? 'otlp' : 'webhook'
}

export interface StatusOptions {
  /** The trails to report, each read from its own store; default: `default`, on `store`. */
  trails?: readonly ForwardedTrail[]
  now?: number
}

/** `store` keeps the positions (the trail `default`'s store); each trail's lag is read from its own. */
export async function forwardingStatus(
  store: EventStore,
  forwarders: readonly Forwarder[] = [],
  options: StatusOptions = {},
): Promise<DestinationStatus[]> {
  const now = options.now ?? Date.now()
  const trails = options.trails ?? [{name: 'default', store}]
  const storeOf = new Map(trails.map((trail) => [trail.name, trail.store]))
  const stored = (await store.forwarding.list()).filter((p) => storeOf.has(p.trail))
  const ids = new Set([...forwarders.map((f) => f.destination.id), ...stored.map((p) => p.destination)])
  const result: DestinationStatus[] = []
  for (const id of ids) {
    const running = forwarders.find((f) => f.destination.id === id)
    const positions = stored.filter((p) => p.destination === id)
    const url = running?.destination.url ?? positions[0]!.url
    // A trail no batch was sent from yet stands at 0, for a destination this process runs.
    if (running)
      for (const {name} of trails) if (!positions.some((p) => p.trail === name)) positions.push(fresh(id, url, name))
    const sizes = await Promise.all(positions.map((p) => storeOf.get(p.trail)!.count()))
    const trailPositions = await Promise.all(
      positions.map((p, i) => trailPosition(storeOf.get(p.trail)!, p, sizes[i]!, now)),
    )
    result.push(destinationStatus(id, url, running, positions, trailPositions))
  }
  return result
}

function destinationStatus(
  id: string,
  url: string,
  running: Forwarder | undefined,
  positions: readonly ForwardingPosition[],
  trails: TrailPosition[],
): DestinationStatus {
  const storedError = positions.find((p) => p.last_error !== undefined)
  const lastError =
    running?.lastError ??
    (storedError ? {message: storedError.last_error!, at: storedError.last_error_at ?? storedError.updated_at} : null)
  return {
    id,
    url,
    kind: running?.destination.kind ?? kindOfUrl(url),
    filter: running ? running.destination.filterText || null : null,
    state: running?.state ?? 'not_running',
    last_error: lastError,
    position: (trails.find((trail) => trail.trail === 'default') ?? trails[0])?.position ?? 0,
    lag_events: trails.reduce((sum, trail) => sum + trail.lag_events, 0),
    lag_seconds: Math.max(0, ...trails.map((trail) => trail.lag_seconds)),
    trails,
  }
}

function fresh(destination: string, url: string, trail: string): ForwardingPosition {
  return {destination, url, trail, position: 0, updated_at: new Date().toISOString()}
}

async function trailPosition(
  store: EventStore,
  stored: ForwardingPosition,
  size: number,
  now: number,
): Promise<TrailPosition> {
  const lagEvents = Math.max(0, size - stored.position)
  let lagSeconds = 0
  if (lagEvents > 0) {
    for await (const event of store.scanEvents({fromIndex: stored.position, toIndex: stored.position + 1}))
      lagSeconds = Math.max(0, (now - Date.parse(event.recorded_at)) / 1000)
  }
  return {
    trail: stored.trail,
    position: stored.position,
    lag_events: lagEvents,
    lag_seconds: Math.round(lagSeconds * 1000) / 1000,
    updated_at: stored.updated_at,
  }
}
