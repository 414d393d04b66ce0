/**
 * The header fields of every stored event (what a policy reads: id, agent, action, status,
 * timestamp, labels, sequence), kept in memory in columns so that a policy check over a million
 * events does not read a million rows out of SQLite each time.
 *
 * Columns of numbers, about 52 bytes an event: repeated strings (agents, action types and names,
 * statuses, label sets) become dictionary codes, UUID ids 16 bytes, timestamps epoch milliseconds.
 * Anything that does not round-trip exactly through that form (a client id that is not a lower-case
 * UUID, a timestamp of a hand-edited file) is kept as text beside the columns, so the headers
 * handed out are always exactly what the store holds.
 *
 * The cache covers events 0..size-1 of the store, contiguous. Newly recorded events are appended
 * from the feed; anything it missed (events recorded before it was filled, or while a catch-up was
 * reading) is read from the store before each use. The store is append-only and owned by this
 * process, so a filled cache never goes stale.
 */
import type {EventHeader, StoredEvent} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {Feed} from './feed.js'

const BATCH = 5000
const INITIAL_CAPACITY = 1024
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Strings to dense codes and back. */
class Dictionary<T = string> {
  readonly values: T[] = []
  readonly #codes = new Map<string, number>()

  code(key: string, value: T): number {
    let code = this.#codes.get(key)
    if (code === undefined) {
      code = this.values.length
      this.values.push(value)
      this.#codes.set(key, code)
    }
    return code
  }

  find(key: string): number | undefined {
    return this.#codes.get(key)
  }
}

export class HeaderCache {
  #size = 0
  #capacity = 0
  #agents = new Uint32Array(0)
  #types = new Uint32Array(0)
  #names = new Uint32Array(0)
  #statuses = new Uint32Array(0)
  #labels = new Uint32Array(0)
  #times = new Float64Array(0)
  #sequences = new Float64Array(0)
  #ids = Buffer.alloc(0)
  /** Values that do not fit the columns, by index. */
  readonly #otherIds = new Map<number, string>()
  readonly #otherTimes = new Map<number, string>()
  readonly #otherSequences = new Map<number, number>()
  /** Set when the store has a hole in its indexes (rows deleted by hand): then every use reads the store. */
  #holes = false
  readonly #strings = {
    agents: new Dictionary(),
    types: new Dictionary(),
    names: new Dictionary(),
    statuses: new Dictionary(),
  }
  readonly #labelSets = new Dictionary<Record<string, string>>()
  readonly #labelsByObject = new WeakMap<object, number>()
  #catchingUp: Promise<void> | undefined

  constructor(
    private readonly store: EventStore,
    feed?: Feed,
  ) {
    feed?.on('events', (events) => {
      // Only what continues the cache; a gap is filled from the store on the next use.
      if (events[0]?.index === this.#size) this.#append(events)
    })
  }

  /** Events cached so far (0..size-1). */
  get size(): number {
    return this.#size
  }

  /** Reads from the store whatever the cache does not hold yet (one reader at a time). */
  async catchUp(): Promise<void> {
    while (this.#catchingUp) await this.#catchingUp
    const run = this.#readMissing()
    this.#catchingUp = run
    try {
      await run
    } finally {
      this.#catchingUp = undefined
    }
  }

  /** Every stored event's header, of one agent or all, in index order, a batch at a time. */
  async *headers(filter: {agent_id?: string} = {}): AsyncIterable<EventHeader[]> {
    await this.catchUp()
    if (this.#holes) {
      yield* this.store.scanEventHeaders({filter})
      return
    }
    const end = this.#size
    let agent: number | undefined
    if (filter.agent_id !== undefined) {
      agent = this.#strings.agents.find(filter.agent_id)
      if (agent === undefined) return
    }
    for (let start = 0; start < end; start += BATCH) {
      const batch: EventHeader[] = []
      const stop = Math.min(end, start + BATCH)
      for (let i = start; i < stop; i++)
        if (agent === undefined || this.#agents[i] === agent) batch.push(this.#header(i))
      if (batch.length > 0) yield batch
    }
  }

  async #readMissing(): Promise<void> {
    const target = await this.store.count()
    while (this.#size < target) {
      const before = this.#size
      for await (const batch of this.store.scanEventHeaders({fromIndex: this.#size, toIndex: target})) {
        // The feed may have appended some of these meanwhile; take only what continues the cache.
        const next = batch.findIndex((header) => header.index === this.#size)
        if (next < 0) {
          if (batch[0]!.index > this.#size) break
          continue
        }
        this.#append(next === 0 ? batch : batch.slice(next))
      }
      // Rows deleted by hand leave a gap that no read fills.
      if (this.#size === before) {
        this.#holes = true
        return
      }
    }
  }

  #append(events: readonly EventHeader[] | readonly StoredEvent[]): void {
    for (const event of events) {
      if (event.index !== this.#size) return
      const i = this.#size
      this.#reserve(i + 1)
      this.#agents[i] = this.#strings.agents.code(event.agent_id, event.agent_id)
      this.#types[i] = this.#strings.types.code(event.action_type, event.action_type)
      this.#names[i] = this.#strings.names.code(event.action_name, event.action_name)
      this.#statuses[i] = this.#strings.statuses.code(event.action_status, event.action_status)
      this.#labels[i] = this.#labelsCode(event.labels)
      if (Number.isSafeInteger(event.sequence)) this.#sequences[i] = event.sequence
      else this.#otherSequences.set(i, event.sequence)
      if (UUID.test(event.id)) this.#ids.write(event.id.replaceAll('-', ''), i * 16, 16, 'hex')
      else this.#otherIds.set(i, event.id)
      const ms = Date.parse(event.timestamp)
      if (Number.isFinite(ms) && new Date(ms).toISOString() === event.timestamp) this.#times[i] = ms
      else this.#otherTimes.set(i, event.timestamp)
      this.#size = i + 1
    }
  }

  // The store's scans hand out one shared (frozen) object per distinct label set, so most of their
  // lookups hit by identity. Events from the feed each carry their own object: remembering those
  // would only fill the WeakMap (and the collector's work) with objects never seen again.
  #labelsCode(labels: Record<string, string>): number {
    let code = this.#labelsByObject.get(labels)
    if (code === undefined) {
      const key = typeof labels === 'string' ? `"${labels}` : JSON.stringify(labels)
      code = this.#labelSets.code(key, typeof labels === 'object' ? Object.freeze({...labels}) : labels)
      if (typeof labels === 'object' && labels !== null && Object.isFrozen(labels))
        this.#labelsByObject.set(labels, code)
    }
    return code
  }

  #header(i: number): EventHeader {
    return new HeaderView(this.#view, i)
  }

  /** What a HeaderView reads: the current columns (replaced when they grow) and the dictionaries. */
  readonly #view: ViewSource = {
    id: (i) => this.#otherIds.get(i) ?? formatUuid(this.#ids, i * 16),
    agentId: (i) => this.#strings.agents.values[this.#agents[i]!]!,
    actionType: (i) => this.#strings.types.values[this.#types[i]!]!,
    actionName: (i) => this.#strings.names.values[this.#names[i]!]!,
    actionStatus: (i) => this.#strings.statuses.values[this.#statuses[i]!]!,
    timestamp: (i) => this.#otherTimes.get(i) ?? new Date(this.#times[i]!).toISOString(),
    labels: (i) => this.#labelSets.values[this.#labels[i]!]!,
    sequence: (i) =>
      this.#otherSequences.size === 0 ? this.#sequences[i]! : (this.#otherSequences.get(i) ?? this.#sequences[i]!),
  }

  // Doubling growth: amortised O(1) per event.
  #reserve(size: number): void {
    if (size <= this.#capacity) return
    const capacity = Math.max(size, this.#capacity * 2, INITIAL_CAPACITY)
    this.#agents = grown(this.#agents, new Uint32Array(capacity))
    this.#types = grown(this.#types, new Uint32Array(capacity))
    this.#names = grown(this.#names, new Uint32Array(capacity))
    this.#statuses = grown(this.#statuses, new Uint32Array(capacity))
    this.#labels = grown(this.#labels, new Uint32Array(capacity))
    this.#times = grown(this.#times, new Float64Array(capacity))
    this.#sequences = grown(this.#sequences, new Float64Array(capacity))
    const ids = Buffer.alloc(capacity * 16)
    this.#ids.copy(ids)
    this.#ids = ids
    this.#capacity = capacity
  }
}

interface ViewSource {
  id(i: number): string
  agentId(i: number): string
  actionType(i: number): string
  actionName(i: number): string
  actionStatus(i: number): string
  timestamp(i: number): string
  labels(i: number): Record<string, string>
  sequence(i: number): number
}

/**
 * One event's header read from the columns on access. A check over a million events then makes a
 * million two-field objects instead of a million objects with nine fields and fresh id and
 * timestamp strings (the ids are only formatted for the violations a report lists). Read-only.
 */
class HeaderView implements EventHeader {
  constructor(
    private readonly source: ViewSource,
    readonly index: number,
  ) {}
  get id(): string {
    return this.source.id(this.index)
  }
  get agent_id(): string {
    return this.source.agentId(this.index)
  }
  get action_type(): string {
    return this.source.actionType(this.index)
  }
  get action_name(): string {
    return this.source.actionName(this.index)
  }
  get action_status(): string {
    return this.source.actionStatus(this.index)
  }
  get timestamp(): string {
    return this.source.timestamp(this.index)
  }
  get labels(): Record<string, string> {
    return this.source.labels(this.index)
  }
  get sequence(): number {
    return this.source.sequence(this.index)
  }
}

function grown<T extends Uint32Array | Float64Array>(old: T, bigger: T): T {
  bigger.set(old)
  return bigger
}

function formatUuid(bytes: Buffer, offset: number): string {
  const hex = bytes.toString('hex', offset, offset + 16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
