// The dashboard shell: loads /v1/dashboard/config, asks for an API key when the service answers
// 401, shows only the enabled features, and routes between views by the URL fragment
// (#/overview, #/agents, #/events?agent_id=..., #/events/<id>, #/runs/<trace id>, #/live, #/policy,
// #/approvals). With several trails, a picker chooses the one every view shows (GET /v1/trails).

import {ApiError, AuthRequired, apiKey, currentTrail, getJson, setApiKey, setTrail} from './api.js'
import {byId, fill} from './dom.js'
import * as agents from './agents.js'
import * as approvals from './approvals.js'
import * as eventDetail from './event-detail.js'
import * as events from './events.js'
import * as live from './live.js'
import * as overview from './overview.js'
import * as policy from './policy.js'
import * as run from './run.js'

const VIEWS = {overview, agents, events, event: eventDetail, run, live, policy, approvals}
const VIEW_FEATURE = {live: 'stream', policy: 'policy'}

let config
let current
let refreshing = false

/** Messages for the user: progress and results quietly, failures as errors. */
function notify(text, kind = 'info') {
  const message = fill('message', text)
  message.className = `message message-${kind}`
}

function handleError(error) {
  if (error instanceof AuthRequired) return showAuth()
  if (error instanceof ApiError) {
    const details = error.details.map((d) => `${d.field}: ${d.message}`).join('; ')
    return notify(`Error ${error.status}: ${error.message}${details ? ` (${details})` : ''}`, 'error')
  }
  notify(`The service could not be reached: ${error.message}`, 'error')
}

const context = {
  get config() {
    return config
  },
  notify,
  handleError,
}

function parseRoute() {
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?')
  const [name, ...rest] = path.split('/')
  if (name === 'events' && rest.length > 0)
    return {name: 'event', id: decodeURIComponent(rest.join('/')), query: new URLSearchParams()}
  if (name === 'runs' && rest.length > 0) {
    return {name: 'run', id: decodeURIComponent(rest.join('/')), query: new URLSearchParams()}
  }
  const enabled = VIEWS[name] && (VIEW_FEATURE[name] === undefined || config.features[VIEW_FEATURE[name]])
  return {name: enabled ? name : 'overview', query: new URLSearchParams(query)}
}

function hideAll() {
  for (const section of document.querySelectorAll('main > section')) section.hidden = true
  byId('loading').hidden = true
}

function showAuth() {
  current?.module.hide?.()
  current = undefined
  hideAll()
  byId('nav').hidden = true
  byId('forget-key').hidden = true
  fill('service-info')
  fill('message')
  const refused = apiKey() !== undefined
  setApiKey(undefined)
  fill('auth-error', refused ? 'The service did not accept that key.' : '')
  byId('auth-view').hidden = false
  byId('api-key').focus()
}

async function showRoute(focusHeading) {
  const route = parseRoute()
  const view = VIEWS[route.name]
  if (current && current.module !== view) current.module.hide?.()
  current = {name: route.name, module: view}
  hideAll()
  for (const link of document.querySelectorAll('#nav a')) {
    const active = link.dataset.view === (route.name === 'event' || route.name === 'run' ? 'events' : route.name)
    if (active) link.setAttribute('aria-current', 'page')
    else link.removeAttribute('aria-current')
  }
  const section = byId(`${route.name}-view`)
  section.hidden = false
  if (focusHeading) {
    const heading = section.querySelector('h1')
    heading.tabIndex = -1
    heading.focus()
  }
  try {
    await view.show(route, context)
  } catch (error) {
    handleError(error)
  }
}

function applyFeatures() {
  for (const element of document.querySelectorAll('[data-feature]')) {
    element.hidden = !config.features[element.dataset.feature]
  }
  const parts = [`${config.service} ${config.version}`]
  if (config.features.auth) parts.push('API key required')
  if (config.features.timestamps) parts.push(`${config.features.tsa} TSA`)
  if (config.features.otlp) parts.push('OTLP receiver on')
  fill('service-info', parts.join(' · '))
  byId('nav').hidden = false
  byId('forget-key').hidden = !config.features.auth
}

/**
 * The trails the key may see, in the picker; the chosen one kept when still listed, else `default`,
 * else the first. A service of one log (no GET /v1/trails) has no picker.
 */
async function loadTrails() {
  let trails
  try {
    trails = await getJson('/v1/trails')
  } catch (error) {
    if (error instanceof AuthRequired) throw error
    setTrail(undefined)
    return
  }
  const names = trails.map((trail) => trail.name)
  if (!names.includes(currentTrail())) setTrail(names.includes('default') ? 'default' : names[0])
  const picker = byId('trail-picker')
  picker.replaceChildren(
    ...trails.map((trail) => {
      const option = new Option(trail.sealed ? `${trail.name} (sealed)` : trail.name, trail.name)
      option.selected = trail.name === currentTrail()
      return option
    }),
  )
  byId('trail-picker-label').hidden = names.length < 2
}

async function start() {
  try {
    await loadTrails()
    config = await getJson('/v1/dashboard/config')
  } catch (error) {
    byId('loading').hidden = true
    return handleError(error)
  }
  applyFeatures()
  await showRoute(false)
}

/** Views that show aggregate state (overview, agents) follow the service at its refresh interval. */
async function refreshCurrent() {
  if (!current?.module.refresh || document.hidden || refreshing) return
  refreshing = true
  try {
    await current.module.refresh(context)
  } catch (error) {
    handleError(error)
  } finally {
    refreshing = false
  }
}

byId('auth-form').addEventListener('submit', (submit) => {
  submit.preventDefault()
  const input = byId('api-key')
  setApiKey(input.value.trim())
  input.value = ''
  byId('auth-view').hidden = true
  void start()
})

// Every view reads the chosen trail afresh: the page starts again on its overview.
byId('trail-picker').addEventListener('change', (change) => {
  setTrail(change.target.value)
  location.hash = '#/overview'
  location.reload()
})

byId('forget-key').addEventListener('click', () => {
  setApiKey(undefined)
  showAuth()
})

window.addEventListener('hashchange', () => {
  if (config && apiKeyAccepted()) void showRoute(true)
})

/** The auth form is up when the key was refused; routing must wait for a key. */
function apiKeyAccepted() {
  return byId('auth-view').hidden
}

for (const view of Object.values(VIEWS)) view.init?.(context)
void start().then(() => {
  setInterval(() => void refreshCurrent(), Math.max(1000, config?.refresh_interval_ms ?? 5000))
})
