/**
 * Which agent a span or log record belongs to (docs/otlp.md, "Which agent"). The GenAI conventions
 * recommend `gen_ai.agent.*` on `invoke_agent` only, so the LLM and tool calls under it name no
 * agent; they belong to their nearest ancestor's. In order:
 *
 * 1. the record's own `gen_ai.agent.name`, else its `gen_ai.agent.id` (read as the name that id
 *    was seen with, when a span carried both);
 * 2. the nearest ancestor in the same trace that resolved to an agent by 1 or 2, among the spans of
 *    the same request and those recorded before (a bounded map, most recent first kept);
 * 3. the resource's `gen_ai.agent.name`, else its `gen_ai.agent.id`;
 * 4. the resource's `service.name`, else `unknown_service`.
 *
 * A parent that arrives after its children (a BatchSpanProcessor exports a run's children, which
 * end first, before their `invoke_agent`) is not waited for: an acknowledged span is recorded at
 * once, under 3 or 4, and the run stays one query away through its `trace_id`.
 */
import type {Json} from '../types.js'
import {firstText} from './genai.js'
import type {AttributeMap} from './span.js'

type AgentSource = 'span' | 'ancestor' | 'resource' | 'service' | 'default'

export interface ResolvedAgent {
  agent: string
  source: AgentSource
}

/** What resolution needs of a span: its place in the trace and what it says itself. */
export interface SpanPlace {
  traceId: string
  spanId: string
  parentSpanId: string
  attributes: AttributeMap
  resource: AttributeMap
}

interface KnownSpan {
  parent: string
  /** The agent the span resolved to by its own attributes or an ancestor's; absent otherwise. */
  agent?: string
}

export const UNKNOWN_AGENT = 'unknown_service'

/** Spans remembered by default: about 100 bytes each, so some 6 MiB. */
const DEFAULT_KNOWN_SPANS = 65_536

/** Ancestors followed at most: a bound against a cycle of ids (a sender's bug or a hostile one). */
const MAX_DEPTH = 256

function spanKey(traceId: string, spanId: string): string {
  return `${traceId}/${spanId}`
}

function isRoot(parentSpanId: string): boolean {
  return parentSpanId === '' || /^0+$/.test(parentSpanId)
}

/** A Map that forgets its oldest entry past `capacity` (insertion order; a refresh moves it last). */
class BoundedMap<V> {
  readonly #entries = new Map<string, V>()
  constructor(readonly capacity: number) {}

  get(key: string): V | undefined {
    return this.#entries.get(key)
  }

  set(key: string, value: V): void {
    this.#entries.delete(key)
    this.#entries.set(key, value)
    if (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value!)
  }

  get size(): number {
    return this.#entries.size
  }
}

/**
 * The agents of the spans recorded so far, per process and in memory only: what a restart or
 * another `serve` process has not seen resolves by the resource and `service.name`.
 */
export class AgentDirectory {
  readonly #spans: BoundedMap<KnownSpan>
  readonly #names: BoundedMap<string>

  constructor(capacity = DEFAULT_KNOWN_SPANS) {
    this.#spans = new BoundedMap(capacity)
    this.#names = new BoundedMap(capacity)
  }

  get knownSpans(): number {
    return this.#spans.size
  }

  /** The agent of the spans of one request, parents in the same request found whatever their order. */
  resolveSpans(spans: readonly SpanPlace[]): ResolvedAgent[] {
    this.#learnNames(spans)
    const local = new Map<string, KnownSpan>()
    for (const span of spans) {
      local.set(spanKey(span.traceId, span.spanId), {parent: span.parentSpanId, agent: this.#own(span.attributes)})
    }
    const resolved = spans.map((span) => {
      const own = this.#own(span.attributes)
      if (own !== undefined) return {agent: own, source: 'span' as const}
      const ancestor = this.#ancestor(span.traceId, span.parentSpanId, local)
      return ancestor === undefined ? this.#fallback(span.resource) : {agent: ancestor, source: 'ancestor' as const}
    })
    // Remembered after all are resolved: what a later request needs is each span's own answer.
    spans.forEach((span, i) => {
      if (span.spanId === '' || span.traceId === '') return
      const {agent, source} = resolved[i]!
      const known = source === 'span' || source === 'ancestor' ? agent : undefined
      this.#spans.set(spanKey(span.traceId, span.spanId), {parent: span.parentSpanId, agent: known})
    })
    return resolved
  }

  /** The agent of a log record: its own attributes, else the span it was emitted in, else the resource. */
  resolveRecord(record: Omit<SpanPlace, 'parentSpanId'>): ResolvedAgent {
    this.#learnNames([record])
    const own = this.#own(record.attributes)
    if (own !== undefined) return {agent: own, source: 'span'}
    const ancestor = this.#ancestor(record.traceId, record.spanId, new Map())
    return ancestor === undefined ? this.#fallback(record.resource) : {agent: ancestor, source: 'ancestor'}
  }

  /** A span that names both remembers that its id is that name, for those that carry only the id. */
  #learnNames(records: ReadonlyArray<{attributes: AttributeMap; resource: AttributeMap}>): void {
    for (const {attributes, resource} of records) {
      for (const source of [attributes, resource]) {
        const name = firstText(source['gen_ai.agent.name'])
        const id = firstText(source['gen_ai.agent.id'])
        if (name !== undefined && id !== undefined) this.#names.set(id, name)
      }
    }
  }

  #named(name: Json | undefined, id: Json | undefined): string | undefined {
    const byName = firstText(name)
    if (byName !== undefined) return byName
    const byId = firstText(id)
    return byId === undefined ? undefined : (this.#names.get(byId) ?? byId)
  }

  #own(attributes: AttributeMap): string | undefined {
    return this.#named(attributes['gen_ai.agent.name'], attributes['gen_ai.agent.id'])
  }

  #ancestor(traceId: string, parentSpanId: string, local: ReadonlyMap<string, KnownSpan>): string | undefined {
    let parent = parentSpanId
    for (let depth = 0; depth < MAX_DEPTH && traceId !== '' && !isRoot(parent); depth++) {
      const key = spanKey(traceId, parent)
      const known = local.get(key) ?? this.#spans.get(key)
      if (known === undefined) return undefined
      if (known.agent !== undefined) return known.agent
      parent = known.parent
    }
    return undefined
  }

  #fallback(resource: AttributeMap): ResolvedAgent {
    const fromResource = this.#named(resource['gen_ai.agent.name'], resource['gen_ai.agent.id'])
    if (fromResource !== undefined) return {agent: fromResource, source: 'resource'}
    const service = firstText(resource['service.name'])
    return service === undefined ? {agent: UNKNOWN_AGENT, source: 'default'} : {agent: service, source: 'service'}
  }
}
