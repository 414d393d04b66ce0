import {v7 as uuidv7} from 'uuid'
import {computeEventHash, validateEvent} from '../src/core/event/index.js'
import {GENESIS_HASH, type StoredEvent} from '../src/core/types.js'

/** Synthetic agent events of realistic size (~450 bytes stored) for the benchmark. */
export const AGENTS = 50

const TYPES = ['TOOL_CALL', 'LLM_CALL', 'API_CALL', 'DATA_ACCESS', 'DECISION', 'FILE_ACCESS']
const NAMES = ['read_file', 'chat.completions', 'crm.lookup_customer', 'payments.refund', 'search_docs', 'write_file']
const STATUSES = ['success', 'success', 'success', 'success', 'failure', 'error']

/**
 * Words of known selectivity in `input.query`: `p<i mod 10>` is in 10 % of events, `q<i mod 100>`
 * in 1 %, `r<i mod 10000>` in 0.01 % (the search rows).
 */
export const SELECTIVE_WORDS = {'10 %': 'p3', '1 %': 'q42', '0.01 %': 'r4242'} as const

/**
 * The i-th client event body. Label `shard` (i modulo `shards`, or the text `shard` when given)
 * lets the export benchmark select exactly 100k events of the bulk ingest by label.
 */
export function syntheticEvent(i: number, shards: number | string = 1): Record<string, unknown> {
  const t = Date.UTC(2026, 10, 1) + i * 250
  return {
    agent_id: `agent-${i % AGENTS}`,
    action_type: TYPES[i % TYPES.length],
    action_name: NAMES[(i >> 1) % NAMES.length],
    action_status: STATUSES[i % STATUSES.length],
    timestamp: new Date(t).toISOString(),
    labels: {
      env: i % 3 === 0 ? 'prod' : 'staging',
      team: `team-${i % 7}`,
      shard: typeof shards === 'string' ? shards : String(i % shards),
    },
    session_id: `session-${Math.floor(i / 20)}`,
    input: {
      path: `/srv/data/customer-${i % 1000}.json`,
      query: `summarise the latest invoices p${i % 10} q${i % 100} r${i % 10_000}`,
    },
    output: {bytes: 1000 + (i % 5000), ok: i % 6 !== 5},
    duration_ms: 5 + (i % 300),
  }
}

/**
 * Client bodies -> stored events, sequenced and given ids as the ingest service does (the rows of
 * the raw-insert ceilings): events `from` .. `from + count - 1`, continuing the chains in `heads`.
 */
export function storedEvents(
  from: number,
  count: number,
  heads: Map<string, {sequence: number; hash: string}> = new Map(),
  shards: number | string = 1,
): StoredEvent[] {
  const now = new Date()
  const out: StoredEvent[] = []
  for (let i = from; i < from + count; i++) {
    const {event} = validateEvent(syntheticEvent(i, shards), {now, generateId: uuidv7})
    const head = heads.get(event.agent_id)
    const content = {
      ...event,
      sequence: (head?.sequence ?? 0) + 1,
      prev_hash: head?.hash ?? GENESIS_HASH,
      recorded_at: now.toISOString(),
    }
    const hash = computeEventHash(content)
    heads.set(event.agent_id, {sequence: content.sequence, hash})
    out.push({...content, hash, index: i})
  }
  return out
}
