// The approvals view (docs/oversight.md): tool calls held by mcp-proxy for a person's decision,
// with their arguments and Approve / Deny buttons, and the history with who decided. It follows
// the stream of `audit-trail:approvals`, so a new held call or another person's decision shows at once.

import {getJson, postJson, streamUrl} from './api.js'
import {byId, fill, formatTime, h} from './dom.js'

const AGENT = 'audit-trail:approvals'
const HISTORY = 100
const RECONNECT_MS = 2000

let context
let socket
let wanted = false
let reconnectTimer

export function init(ctx) {
  context = ctx
}

export async function show() {
  wanted = true
  if (!socket) connect()
  await load()
}

export function hide() {
  wanted = false
  clearTimeout(reconnectTimer)
  socket?.close(1000)
  socket = undefined
}

function connect() {
  const ws = new WebSocket(streamUrl({agent_id: AGENT}))
  socket = ws
  ws.addEventListener('message', (message) => {
    if (JSON.parse(message.data).type === 'event') void load().catch((error) => context.handleError(error))
  })
  ws.addEventListener('close', () => {
    if (socket !== ws) return
    socket = undefined
    if (wanted) reconnectTimer = setTimeout(() => wanted && !socket && connect(), RECONNECT_MS)
  })
}

async function load() {
  const approvals = await getJson('/v1/approvals', {limit: String(HISTORY)})
  const pending = approvals.filter((a) => a.state === 'pending')
  const decided = approvals.filter((a) => a.state !== 'pending').reverse()
  fill('approvals-pending', ...pending.map(pendingCard))
  byId('approvals-none').hidden = pending.length > 0
  fill('approvals-history', ...decided.map(historyRow))
}

function argumentsOf(approval) {
  if (!('input' in approval)) return h('p', {class: 'hint'}, 'The arguments were erased.')
  return h('pre', {class: 'json'}, JSON.stringify(approval.input, null, 2))
}

function pendingCard(approval) {
  const reasonId = `reason-${approval.id}`
  return h(
    'li',
    {class: 'panel approval', 'data-approval': approval.id},
    h('h3', {}, `${approval.agent_id}: ${approval.action_name}`),
    h(
      'p',
      {class: 'hint'},
      `Held by rule "${approval.rule}" at ${formatTime(approval.requested_at)}`,
      approval.expires_at ? `; denied by timeout at ${formatTime(approval.expires_at)}` : '',
    ),
    argumentsOf(approval),
    h('label', {for: reasonId}, 'Reason (recorded with the decision)'),
    h('input', {id: reasonId, class: 'approval-reason', autocomplete: 'off'}),
    h(
      'div',
      {class: 'actions'},
      h('button', {type: 'button', class: 'approve', onclick: () => decide(approval, 'approve', reasonId)}, 'Approve'),
      h('button', {type: 'button', class: 'deny secondary', onclick: () => decide(approval, 'deny', reasonId)}, 'Deny'),
    ),
  )
}

async function decide(approval, decision, reasonId) {
  const reason = byId(reasonId).value.trim()
  try {
    const decided = await postJson(
      `/v1/approvals/${encodeURIComponent(approval.id)}`,
      reason ? {decision, reason} : {decision},
    )
    context.notify(`${approval.action_name}: ${decided.state} by ${decided.decision.decided_by}`)
  } catch (error) {
    context.handleError(error)
  }
  await load().catch((error) => context.handleError(error))
}

function historyRow(approval) {
  const decision = approval.decision
  return h(
    'tr',
    {},
    h('td', {}, formatTime(approval.requested_at)),
    h('td', {}, approval.agent_id),
    h('td', {}, approval.action_name),
    h('td', {}, approval.rule),
    h(
      'td',
      {},
      h('span', {class: `badge ${approval.state === 'approved' ? 'badge-ok' : 'badge-bad'}`}, approval.state),
    ),
    h('td', {}, decision?.decided_by ?? '–'),
    h('td', {}, decision?.reason ?? ''),
    h('td', {}, decision ? formatTime(decision.decided_at) : '–'),
  )
}
