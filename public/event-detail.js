// One event: its fields, hash and previous hash, its Merkle inclusion proof, and a Verify button
// that asks the service to recompute the agent's chain (GET /v1/verify) and recomputes the
// inclusion proof here in the browser (merkle.js).

import {getJson} from './api.js'
import {byId, fill, formatNumber, formatTime, h, statusBadge, verdict} from './dom.js'
import {canVerifyInBrowser, leafHash, rootFromInclusionProof} from './merkle.js'

let shown

export function init(context) {
  const button = byId('verify-event')
  button.addEventListener('click', async () => {
    if (!shown) return
    button.disabled = true
    fill('verify-result', 'Verifying…')
    try {
      await verify(shown)
    } catch (error) {
      fill('verify-result')
      context.handleError(error)
    } finally {
      button.disabled = false
    }
  })
}

export async function show(route) {
  shown = undefined
  fill('event-title', 'Event')
  for (const id of [
    'event-fields',
    'event-hash',
    'event-prev-hash',
    'verify-result',
    'proof-fields',
    'proof-path',
    'event-content',
  ])
    fill(id)
  const id = encodeURIComponent(route.id)
  const [event, proof] = await Promise.all([getJson(`/v1/events/${id}`), getJson(`/v1/merkle/proof/${id}`)])
  shown = event
  fill('event-title', `Event ${event.agent_id} #${event.sequence}: ${event.action_name}`)
  renderFields(event)
  fill('event-hash', event.hash)
  fill('event-prev-hash', event.prev_hash)
  renderProof(proof)
  renderContent(event, await erasuresOf(event))
}

/** The erasure events the event's erased members name, by id (one that cannot be read is left out). */
async function erasuresOf(event) {
  const ids = [...new Set(Object.values(event.erased ?? {}))]
  const found = await Promise.all(
    ids.map((id) => getJson(`/v1/events/${encodeURIComponent(id)}`).catch(() => undefined)),
  )
  return new Map(found.filter(Boolean).map((erasure) => [erasure.id, erasure]))
}

function pair(term, ...definition) {
  return [h('dt', {}, term), h('dd', {}, ...definition)]
}

function renderFields(event) {
  const optional = [
    ['Session', event.session_id],
    [
      'Trace',
      event.trace_id === undefined
        ? undefined
        : h(
            'a',
            {href: `#/runs/${encodeURIComponent(event.trace_id)}`, title: 'every event of this run'},
            event.trace_id,
          ),
    ],
    ['Span', event.span_id],
    ['Parent', event.parent_id],
    ['Duration', event.duration_ms === undefined ? undefined : `${formatNumber(event.duration_ms)} ms`],
    ['Error', event.error ?? withheld(event, 'error')],
  ].filter(([, value]) => value !== undefined)
  const labels = Object.entries(event.labels ?? {})
  fill(
    'event-fields',
    pair('ID', h('code', {}, event.id)),
    pair('Index', String(event.index)),
    pair('Agent', h('a', {href: `#/events?${new URLSearchParams({agent_id: event.agent_id})}`}, event.agent_id)),
    pair('Sequence', String(event.sequence)),
    pair('Action type', event.action_type),
    pair('Action name', event.action_name),
    pair('Status', statusBadge(event.action_status)),
    pair('Timestamp', formatTime(event.timestamp)),
    pair('Recorded at', formatTime(event.recorded_at)),
    optional.map(([term, value]) => pair(term, value)),
    pair(
      'Labels',
      labels.length === 0
        ? 'none'
        : h(
            'ul',
            {class: 'labels'},
            labels.map(([key, value]) => h('li', {}, h('code', {}, `${key}=${value}`))),
          ),
    ),
  )
}

function renderProof(proof) {
  fill(
    'proof-fields',
    pair('Leaf index', String(proof.leaf_index)),
    pair('Tree size', formatNumber(proof.tree_size)),
    pair('Leaf hash', h('code', {class: 'hash-full'}, proof.leaf_hash)),
    pair('Merkle root', h('code', {class: 'hash-full'}, proof.merkle_root)),
  )
  fill(
    'proof-path',
    proof.audit_path.length === 0
      ? h('li', {}, 'empty: the tree has a single leaf')
      : proof.audit_path.map((hex) => h('li', {}, h('code', {class: 'hash-full'}, hex))),
  )
}

/** What stands for a payload member that is not shown: erased (docs/erasure.md) or redacted; else undefined. */
function withheld(event, name, erasures) {
  const erasureId = event.erased?.[name]
  if (erasureId !== undefined) {
    const erasure = erasures?.get(erasureId)
    const why = erasure
      ? ` on ${formatTime(erasure.recorded_at)}: ${erasure.metadata?.reason ?? 'no reason recorded'}`
      : ''
    return h(
      'span',
      {class: 'withheld', 'data-erased': name},
      `erased${why} (erasure `,
      h('a', {href: `#/events/${encodeURIComponent(erasureId)}`}, erasureId),
      '); its commitment still holds',
    )
  }
  if (event.redacted?.includes(name)) return h('span', {class: 'withheld'}, 'redacted from this view')
  return undefined
}

function renderContent(event, erasures) {
  const parts = ['input', 'output', 'metadata'].filter(
    (name) => event[name] !== undefined || withheld(event, name) !== undefined,
  )
  fill(
    'event-content',
    parts.length === 0
      ? h('p', {}, 'No input, output or metadata.')
      : parts.map((name) => [
          h('h3', {}, name),
          event[name] === undefined
            ? h('p', {}, withheld(event, name, erasures))
            : h('pre', {tabindex: 0}, JSON.stringify(event[name], null, 2)),
        ]),
  )
}

async function verify(event) {
  const id = encodeURIComponent(event.id)
  const [chain, proof] = await Promise.all([
    getJson('/v1/verify', {agent_id: event.agent_id}),
    getJson(`/v1/merkle/proof/${id}`),
  ])
  renderProof(proof)
  fill(
    'verify-result',
    h(
      'ul',
      {class: 'checks'},
      h('li', {}, chainVerdict(chain, event)),
      h('li', {}, await inclusionVerdict(event, proof)),
    ),
  )
}

function chainVerdict(chain, event) {
  if (chain.valid) {
    return verdict(
      true,
      `Chain of ${chain.agent_id} verifies: ${formatNumber(chain.events_checked)} events recomputed, head ` +
        `sequence ${chain.head_sequence}.`,
    )
  }
  const where =
    event.sequence >= chain.first_invalid_sequence
      ? event.sequence === chain.first_invalid_sequence
        ? 'at this event'
        : 'before this event'
      : 'after this event'
  return [
    verdict(
      false,
      '',
      `Chain of ${chain.agent_id} is broken ${where}: ${chain.reason.replace(/_/g, ' ')} at sequence ` +
        `${chain.first_invalid_sequence}.`,
    ),
    h(
      'dl',
      {class: 'fields compact'},
      pair('Expected', h('code', {class: 'hash-full'}, chain.expected ?? '–')),
      pair('Actual', h('code', {class: 'hash-full'}, chain.actual ?? '–')),
    ),
  ]
}

async function inclusionVerdict(event, proof) {
  if (!canVerifyInBrowser()) {
    return (
      `Inclusion proof not recomputed: this browser offers WebCrypto only on https or localhost. The service ` +
      `reports leaf ${proof.leaf_index} of ${proof.tree_size}.`
    )
  }
  const leaf = await leafHash(event.hash)
  const root = await rootFromInclusionProof(proof.leaf_index, proof.tree_size, leaf, proof.audit_path)
  const ok = leaf === proof.leaf_hash && root === proof.merkle_root
  return verdict(
    ok,
    `Inclusion proof recomputed in this browser: leaf ${proof.leaf_index} is in the tree of size ` +
      `${formatNumber(proof.tree_size)} with root ${proof.merkle_root.slice(0, 16)}…`,
    `Inclusion proof does not lead to the root ${proof.merkle_root.slice(0, 16)}… (recomputed: ` +
      `${root ? `${root.slice(0, 16)}…` : 'none, the path does not fit the tree size'})`,
  )
}
