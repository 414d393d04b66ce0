// The events table: the filters of GET /v1/events, text search (GET /v1/search) and paging. The
// state lives in the URL fragment (#/events?agent_id=...&offset=50) so a view can be bookmarked
// and the browser's back button works.

import {download, getJson, getPage} from './api.js'
import {byId, fill, formatNumber, formatTime, h, isoToLocalInput, localInputToIso, statusBadge} from './dom.js'

let state = new URLSearchParams()

function go(params) {
  location.hash = `#/events?${params}`
}

const FILTERS = ['agent_id', 'action_type', 'trace_id', 'session_id', 'since', 'until']

/** The filter part of the state, as the query of /v1/events and /v1/export. */
function filterQuery(params) {
  const query = {}
  for (const [name, value] of params) {
    if (FILTERS.includes(name) || name.startsWith('label.')) query[name] = value
  }
  return query
}

function readForm() {
  const form = byId('filter-form')
  const params = new URLSearchParams()
  const add = (name, value) => {
    if (value) params.append(name, value)
  }
  add('agent_id', form.elements.agent_id.value.trim())
  add('action_type', form.elements.action_type.value.trim())
  add('trace_id', form.elements.trace_id.value.trim())
  add('session_id', form.elements.session_id.value.trim())
  add('since', localInputToIso(form.elements.since.value))
  add('until', localInputToIso(form.elements.until.value))
  for (const pair of form.elements.labels.value.split(/[\s,]+/).filter(Boolean)) {
    const at = pair.indexOf('=')
    if (at > 0) params.append(`label.${pair.slice(0, at)}`, pair.slice(at + 1))
  }
  params.set('limit', form.elements.limit.value)
  return params
}

function writeForm(params) {
  const form = byId('filter-form')
  form.elements.agent_id.value = params.get('agent_id') ?? ''
  form.elements.action_type.value = params.get('action_type') ?? ''
  form.elements.trace_id.value = params.get('trace_id') ?? ''
  form.elements.session_id.value = params.get('session_id') ?? ''
  form.elements.since.value = isoToLocalInput(params.get('since'))
  form.elements.until.value = isoToLocalInput(params.get('until'))
  form.elements.labels.value = [...params]
    .filter(([name]) => name.startsWith('label.'))
    .map(([name, value]) => `${name.slice(6)}=${value}`)
    .join(' ')
  form.elements.limit.value = params.get('limit') ?? '50'
  byId('search-input').value = params.get('q') ?? ''
}

export function init(context) {
  byId('filter-form').addEventListener('submit', (submit) => {
    submit.preventDefault()
    go(readForm())
  })
  byId('filter-limit').addEventListener('change', () => go(readForm()))
  byId('filter-clear').addEventListener('click', () => go(new URLSearchParams()))
  byId('search-form').addEventListener('submit', (submit) => {
    submit.preventDefault()
    const q = byId('search-input').value.trim()
    go(new URLSearchParams(q ? {q, limit: byId('filter-limit').value} : {}))
  })
  const page = (direction) => {
    const params = new URLSearchParams(state)
    const limit = Number(params.get('limit') ?? 50)
    params.set('offset', String(Math.max(0, Number(params.get('offset') ?? 0) + direction * limit)))
    go(params)
  }
  byId('page-prev').addEventListener('click', () => page(-1))
  byId('page-next').addEventListener('click', () => page(1))
  const exportButton = byId('export-filtered')
  exportButton.addEventListener('click', async () => {
    exportButton.disabled = true
    try {
      const name = await download('/v1/export', filterQuery(state), 'audit-trail.atrail.json')
      context.notify(`Downloaded ${name}.`, 'success')
    } catch (error) {
      context.handleError(error)
    } finally {
      exportButton.disabled = false
    }
  })
}

export async function show(route, context) {
  state = route.query
  writeForm(state)
  const limit = Number(state.get('limit') ?? 50)
  const offset = Number(state.get('offset') ?? 0)
  const q = state.get('q')
  fill('events-summary', 'Loading…')
  const [page] = await Promise.all([
    q ? searchPage(q, limit, offset) : getPage('/v1/events', {...filterQuery(state), limit, offset}),
    fillSuggestions(),
  ])
  renderRows(page.items)
  const first = page.items.length ? offset + 1 : 0
  const what = q ? `events matching “${q}” (search ignores the filters)` : 'events'
  fill(
    'events-summary',
    page.total === 0
      ? `No ${what}.`
      : `Showing ${formatNumber(first)}–${formatNumber(offset + page.items.length)} of ${formatNumber(page.total)} ` +
          `${what}`,
  )
  byId('page-prev').disabled = offset === 0
  byId('page-next').disabled = offset + page.items.length >= page.total
  byId('export-filtered').hidden = Boolean(q) || !context.config.features.export
}

async function searchPage(q, limit, offset) {
  const result = await getJson('/v1/search', {q, limit, offset})
  return {items: result.results, total: result.total}
}

/** Known agents and action types for the filter inputs' suggestion lists. */
async function fillSuggestions() {
  const [agents, stats] = await Promise.all([getJson('/v1/agents'), getJson('/v1/stats')])
  fill(
    'agent-options',
    agents.map((agent) => h('option', {value: agent.agent_id})),
  )
  fill(
    'type-options',
    Object.keys(stats.by_action_type)
      .sort()
      .map((type) => h('option', {value: type})),
  )
}

export function eventLink(event) {
  return h('a', {href: `#/events/${encodeURIComponent(event.id)}`}, event.action_name)
}

/** One table row; also used by the live view. */
export function eventRow(event, attributes = {}) {
  return h(
    'tr',
    attributes,
    h('td', {class: 'num'}, String(event.index)),
    h('td', {}, formatTime(event.timestamp)),
    h('td', {}, h('a', {href: `#/events?${new URLSearchParams({agent_id: event.agent_id})}`}, event.agent_id)),
    h('td', {class: 'num'}, String(event.sequence)),
    h('td', {}, event.action_type),
    h('td', {}, eventLink(event)),
    h('td', {}, statusBadge(event.action_status)),
  )
}

function renderRows(events) {
  fill(
    'events-body',
    events.map((event) => eventRow(event)),
  )
}
