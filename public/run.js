// One agent run: every event of a trace (GET /v1/events?trace_id=), spans as a tree by parent_id
// with the log records of each span in place, each with its chain position (agent #sequence) and
// Merkle leaf. "Verify proofs" recomputes every inclusion proof in this browser (merkle.js).

import {getJson} from './api.js'
import {byId, fill, formatNumber, h, statusBadge, verdict} from './dom.js'
import {canVerifyInBrowser, leafHash, rootFromInclusionProof} from './merkle.js'

/** A run larger than one page is shown as far as its first page goes, and says so. */
const PAGE = 1000

let shown = []

export function init(context) {
  const button = byId('run-verify')
  button.addEventListener('click', async () => {
    button.disabled = true
    try {
      await verifyProofs(shown)
    } catch (error) {
      context.handleError(error)
    } finally {
      button.disabled = false
    }
  })
}

export async function show(route) {
  const traceId = route.id
  shown = []
  fill('run-title', `Run ${traceId}`)
  for (const id of ['run-summary', 'run-table', 'run-tree', 'run-verify-result']) fill(id)
  const events = await getJson('/v1/events', {trace_id: traceId, limit: String(PAGE)})
  shown = events
  const agents = [...new Set(events.map((event) => event.agent_id))]
  fill(
    'run-summary',
    events.length === 0
      ? 'No event of this trace is recorded.'
      : `${formatNumber(events.length)} events${events.length === PAGE ? ' (the first page)' : ''} ` +
          `in the chains of ${agents.join(', ')}.`,
  )
  fill('run-tree', tree(events))
  // The same events as a table, with the evidence package of the run a click away.
  const table = `#/events?${new URLSearchParams({trace_id: traceId})}`
  fill('run-table', h('a', {href: table}, 'As a table, with its evidence package'))
}

const isLog = (event) => event.metadata?.log_record === true

/** Spans by parent; a span whose parent is not recorded is a root (its parent may come later). */
function tree(events) {
  const spans = events.filter((event) => !isLog(event))
  const spanIds = new Set(spans.map((event) => event.span_id).filter(Boolean))
  const children = new Map()
  const logs = new Map()
  const roots = []
  for (const event of spans) {
    if (event.parent_id && spanIds.has(event.parent_id)) push(children, event.parent_id, event)
    else roots.push(event)
  }
  const loose = []
  for (const event of events.filter(isLog)) {
    if (event.span_id && spanIds.has(event.span_id)) push(logs, event.span_id, event)
    else loose.push(event)
  }
  const node = (event) => {
    const own = (logs.get(event.span_id) ?? []).map((log) => h('li', {class: 'run-log'}, line(log)))
    const under = (children.get(event.span_id) ?? []).map(node)
    return h('li', {}, line(event), own.length + under.length === 0 ? undefined : h('ul', {}, own, under))
  }
  return [roots.map(node), loose.map((log) => h('li', {class: 'run-log'}, line(log)))]
}

function push(map, key, value) {
  if (!map.has(key)) map.set(key, [])
  map.get(key).push(value)
}

function line(event) {
  const parentMissing =
    event.parent_id && !isLog(event) ? h('span', {class: 'hint'}, ` parent ${event.parent_id} not recorded`) : undefined
  return h(
    'span',
    {class: 'run-node', 'data-event': event.id},
    h('code', {}, event.action_type),
    ' ',
    h('a', {href: `#/events/${encodeURIComponent(event.id)}`}, event.action_name),
    ' ',
    statusBadge(event.action_status),
    ' ',
    h('span', {class: 'run-chain'}, `${event.agent_id} #${event.sequence}`),
    ' ',
    h('span', {class: 'run-leaf'}, `leaf ${event.index}`),
    event.duration_ms === undefined ? undefined : ` ${formatNumber(event.duration_ms)} ms`,
    parentMissing,
    h('span', {class: 'run-proof'}),
  )
}

async function verifyProofs(events) {
  if (!canVerifyInBrowser()) {
    fill('run-verify-result', 'Proofs not recomputed: this browser offers WebCrypto only on https or localhost.')
    return
  }
  let good = 0
  for (const event of events) {
    const proof = await getJson(`/v1/merkle/proof/${encodeURIComponent(event.id)}`)
    const leaf = await leafHash(event.hash)
    const root = await rootFromInclusionProof(proof.leaf_index, proof.tree_size, leaf, proof.audit_path)
    const ok = leaf === proof.leaf_hash && root === proof.merkle_root
    if (ok) good++
    const slot = document.querySelector(`[data-event="${CSS.escape(event.id)}"] .run-proof`)
    slot?.replaceChildren(' ', verdict(ok, 'proof', 'proof'))
  }
  fill(
    'run-verify-result',
    verdict(
      good === events.length,
      `${formatNumber(good)} inclusion proofs recomputed in this browser.`,
      `${formatNumber(events.length - good)} of ${formatNumber(events.length)} inclusion proofs ` +
        'do not lead to the root.',
    ),
  )
}
