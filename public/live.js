// The live view: events as they are recorded, from the WebSocket /v1/stream. It opens with the
// last few stored events for context (`from_index`), and after a disconnect resumes from the last
// index it saw, so no event is missed or shown twice.

import {getJson, streamUrl} from './api.js'
import {byId, fill, formatNumber, formatTime, h} from './dom.js'
import {eventRow} from './events.js'

const BACKLOG = 20
const MAX_ROWS = 500
const RECONNECT_MS = 2000

let socket
let wanted = false
let nextIndex
let received = 0
let helloSize = 0
let reconnectTimer

export function init() {
  byId('live-clear').addEventListener('click', () => {
    fill('live-body')
    byId('live-empty').hidden = false
  })
}

export async function show() {
  wanted = true
  if (socket) return
  if (nextIndex === undefined) {
    const root = await getJson('/v1/merkle/root')
    nextIndex = Math.max(0, root.tree_size - BACKLOG)
  }
  connect()
}

export function hide() {
  wanted = false
  clearTimeout(reconnectTimer)
  socket?.close(1000)
  socket = undefined
}

function status(text, kind) {
  const element = fill('live-status', text)
  element.className = kind
}

function connect() {
  status('Connecting…', '')
  const ws = new WebSocket(streamUrl({from_index: nextIndex}))
  socket = ws
  ws.addEventListener('message', (message) => {
    const data = JSON.parse(message.data)
    if (data.type === 'hello') {
      helloSize = data.tree_size
      showConnected()
    } else if (data.type === 'event') addEvent(data.event)
    else if (data.type === 'timestamp') addTimestamp(data.timestamp)
  })
  ws.addEventListener('close', (close) => {
    if (socket !== ws) return
    socket = undefined
    if (!wanted) return
    status(`Disconnected (${close.code || 'no code'}); reconnecting…`, 'bad')
    reconnectTimer = setTimeout(() => {
      if (wanted && !socket) connect()
    }, RECONNECT_MS)
  })
}

function prepend(row) {
  const body = byId('live-body')
  body.prepend(row)
  while (body.rows.length > MAX_ROWS) body.lastElementChild.remove()
  byId('live-empty').hidden = true
}

function addEvent(event) {
  nextIndex = Math.max(nextIndex, event.index + 1)
  received += 1
  prepend(eventRow(event, {class: 'fresh'}))
  // Outside the status region: a screen reader hears connection changes, not every event.
  fill('live-count', `· ${formatNumber(received)} events received`)
}

function showConnected() {
  status(`● Connected · tree size ${formatNumber(helloSize)} at connect`, 'ok')
}

function addTimestamp(timestamp) {
  prepend(
    h(
      'tr',
      {class: 'fresh timestamp-row'},
      h(
        'td',
        {colspan: 7},
        `Timestamp issued by ${timestamp.tsa} at ${formatTime(timestamp.timestamp)} for tree size ` +
          `${formatNumber(timestamp.tree_size)}, root `,
        h('code', {class: 'hash'}, `${timestamp.merkle_root.slice(0, 16)}…`),
      ),
    ),
  )
}
