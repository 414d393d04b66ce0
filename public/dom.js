// DOM helpers. Every event field is attacker-controlled (any agent can write any string), so text
// only ever enters the page through text nodes: nothing here parses HTML.

const SVG_NS = 'http://www.w3.org/2000/svg'

function build(element, attributes, children) {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value)
    else element.setAttribute(name, value === true ? '' : String(value))
  }
  append(element, children)
  return element
}

/** An HTML element: `h('a', {href: '#/agents'}, 'Agents')`. Strings become text nodes. */
export function h(tag, attributes, ...children) {
  return build(document.createElement(tag), attributes, children)
}

/** An SVG element, same rules as `h`. */
export function svg(tag, attributes, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attributes, children)
}

export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
}

/** Replaces the children of the element with `id`; returns the element. */
export function fill(id, ...children) {
  const element = byId(id)
  element.replaceChildren()
  append(element, children)
  return element
}

export function byId(id) {
  const element = document.getElementById(id)
  if (!element) throw new Error(`missing element #${id}`)
  return element
}

export function formatNumber(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : '–'
}

/** `2026-11-21 22:45:00 UTC`: the service's times are UTC, so the page shows UTC too. */
export function formatTime(iso) {
  if (!iso) return '–'
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') + ' UTC'
}

/** A hash shortened for tables; the full value stays available as the element's title. */
export function shortHash(hex) {
  return h('code', {title: hex, class: 'hash'}, hex ? `${hex.slice(0, 12)}…` : '–')
}

/** A status word with a symbol, so that colour is never the only signal. */
export function verdict(ok, goodText, badText) {
  return h('span', {class: ok ? 'ok' : 'bad'}, ok ? `✓ ${goodText}` : `✗ ${badText}`)
}

export function statusBadge(status) {
  const good = status === 'success'
  const neutral = status === 'pending'
  return h('span', {class: `badge ${good ? 'badge-ok' : neutral ? 'badge-neutral' : 'badge-bad'}`}, status)
}

/** Converts a `datetime-local` value (read as UTC, like every time on the page) to ISO 8601. */
export function localInputToIso(value) {
  if (!value) return undefined
  return `${value.length === 16 ? `${value}:00` : value}Z`
}

export function isoToLocalInput(iso) {
  return iso
    ? iso
        .replace(/Z$/, '')
        .replace(/\.\d+$/, '')
        .slice(0, 19)
    : ''
}
