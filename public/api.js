// The dashboard's only door to the service: JSON requests under /v1 with the API key, when one is
// needed. The key lives in sessionStorage (this tab only, gone when it closes), never in a URL
// except the WebSocket's `access_token`, which browsers give no other way to send.

const KEY_STORAGE = 'audit-trail.api-key'
const TRAIL_STORAGE = 'audit-trail.trail'

/** 401: the page must ask for a key (again). */
export class AuthRequired extends Error {}

/** Any other error answer, with the service's `{error: {code, message, details}}`. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `the service answered ${status}`)
    this.status = status
    this.code = body?.error?.code
    this.details = body?.error?.details ?? []
  }
}

export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) ?? undefined
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_STORAGE, key)
  else sessionStorage.removeItem(KEY_STORAGE)
}

/** The trail the picker chose (this tab only); undefined: the service's own choice (docs/dashboard.md). */
export function currentTrail() {
  return sessionStorage.getItem(TRAIL_STORAGE) ?? undefined
}

export function setTrail(name) {
  if (name) sessionStorage.setItem(TRAIL_STORAGE, name)
  else sessionStorage.removeItem(TRAIL_STORAGE)
}

/** `/v1/<rest>` on the chosen trail is `/v1/trails/<trail>/<rest>`; GET /v1/trails itself lists every trail. */
export function onTrail(path) {
  const trail = currentTrail()
  if (!trail || !path.startsWith('/v1/') || /^\/v1\/trails(\?|$)/.test(path)) return path
  return `/v1/trails/${encodeURIComponent(trail)}/${path.slice('/v1/'.length)}`
}

/** `query` values that are undefined or '' are left out. */
export function withQuery(path, query = {}) {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.append(name, String(value))
  }
  const text = params.toString()
  return text ? `${path}?${text}` : path
}

async function send(method, path, body) {
  const headers = {Accept: 'application/json'}
  const key = apiKey()
  if (key) headers.Authorization = `Bearer ${key}`
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  const init = {method, headers, body: body === undefined ? undefined : JSON.stringify(body)}
  const response = await fetch(onTrail(path), init)
  if (response.status === 401) throw new AuthRequired('an API key is required')
  if (!response.ok) {
    const errorBody = await response.json().catch(() => undefined)
    throw new ApiError(response.status, errorBody)
  }
  return response
}

export async function getJson(path, query) {
  return (await send('GET', withQuery(path, query))).json()
}

/** GET /v1/events and the like: the page of results and `X-Total-Count`. */
export async function getPage(path, query) {
  const response = await send('GET', withQuery(path, query))
  return {items: await response.json(), total: Number(response.headers.get('X-Total-Count') ?? 0)}
}

export async function postJson(path, body) {
  return (await send('POST', path, body)).json()
}

/**
 * Downloads a file the service serves as an attachment. A plain link cannot carry the
 * Authorization header, so the body is fetched and handed to the browser as a blob.
 */
export async function download(path, query, fallbackName) {
  const response = await send('GET', withQuery(path, query))
  const disposition = response.headers.get('Content-Disposition') ?? ''
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? fallbackName
  const url = URL.createObjectURL(await response.blob())
  const link = document.createElement('a')
  link.href = url
  link.download = name
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
  return name
}

/** The URL of the chosen trail's stream on this host, ws: or wss: like the page, with the key when there is one. */
export function streamUrl(query) {
  const url = new URL(withQuery(onTrail('/v1/stream'), {...query, access_token: apiKey()}), location.href)
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:'
  return url.href
}
