// The overview: totals from /v1/stats, the latest timestamp and its verification, an hourly chart
// of the last 24 hours, and the two actions (timestamp the root, download an evidence package).

import {download, getJson, getPage, postJson} from './api.js'
import {byId, fill, formatNumber, formatTime, h, svg, verdict} from './dom.js'

const HOUR_MS = 3_600_000
const HOURS = 24

export function init(context) {
  const timestampButton = byId('request-timestamp')
  timestampButton.addEventListener('click', async () => {
    timestampButton.disabled = true
    context.notify('Requesting an RFC 3161 timestamp for the current Merkle root…')
    try {
      const record = await postJson('/v1/timestamp')
      context.notify(
        `Timestamp issued by ${record.tsa} at ${formatTime(record.timestamp)} for tree size ` +
          `${formatNumber(record.tree_size)}.`,
        'success',
      )
      await refresh(context)
    } catch (error) {
      context.handleError(error)
    } finally {
      timestampButton.disabled = false
    }
  })

  const exportButton = byId('download-export')
  exportButton.addEventListener('click', async () => {
    exportButton.disabled = true
    context.notify('Preparing the evidence package…')
    try {
      const name = await download('/v1/export', {}, 'audit-trail.atrail.json')
      context.notify(`Downloaded ${name}. Check it offline with: audit-trail verify --package ${name}`, 'success')
    } catch (error) {
      context.handleError(error)
    } finally {
      exportButton.disabled = false
    }
  })
}

export async function show(_route, context) {
  await refresh(context)
}

export async function refresh(context) {
  const features = context.config.features
  const [stats, timestampCheck, hourly, forwarding] = await Promise.all([
    getJson('/v1/stats'),
    features.timestamps ? getJson('/v1/timestamps/verify') : undefined,
    countPerHour(Date.now()),
    // A service built without the forwarding route (an app in a test) has nothing to show.
    getJson('/v1/forwarding').catch(() => ({destinations: []})),
  ])
  fill('stat-total', formatNumber(stats.total_events))
  fill('stat-recent', formatNumber(stats.events_last_24h))
  fill('stat-active', `${formatNumber(stats.active_agents)} of ${formatNumber(stats.total_agents)}`)
  fill('stat-tree-size', formatNumber(stats.tree_size))
  fill('stat-root', stats.merkle_root)
  showStorage(stats.storage)
  await showChainHealth(stats)
  if (timestampCheck) showTimestamp(timestampCheck, stats)
  drawChart(hourly)
  showForwarding(forwarding.destinations)
}

// Each forwarding destination (docs/forwarding.md): position, lag and last error per trail.
function showForwarding(destinations) {
  byId('forwarding-panel').hidden = destinations.length === 0
  fill(
    'forwarding-list',
    destinations.map((destination) =>
      h(
        'li',
        {},
        h('code', {}, destination.url),
        ` · ${destination.state.replace('_', ' ')}`,
        ...destination.trails.map(
          (trail) =>
            ` · ${trail.trail}: position ${formatNumber(trail.position)}, ${formatNumber(trail.lag_events)} behind` +
            // lag_seconds has milliseconds; whole seconds read better.
            (trail.lag_events > 0 ? ` (${formatNumber(Math.round(trail.lag_seconds))} s)` : ''),
        ),
        destination.last_error
          ? h(
              'p',
              {class: 'bad'},
              `Last error at ${formatTime(destination.last_error.at)}: ${destination.last_error.message}`,
            )
          : '',
      ),
    ),
  )
}

// The embedded store's capacity, once past its warning level (absent with a database server).
function showStorage(storage) {
  const line = byId('storage-warning')
  line.hidden = !storage || storage.state === 'ok'
  if (line.hidden) return
  const mib = (bytes) => `${formatNumber(Math.round(bytes / 1048576))} MiB`
  const percent = Math.floor((1000 * storage.used_bytes) / storage.capacity_bytes) / 10
  const what = storage.state === 'full' ? 'Storage full: new events are refused (507).' : 'Storage nearly full.'
  line.textContent =
    `${what} The embedded store holds ${mib(storage.used_bytes)}, ${percent}% of its ` +
    `${mib(storage.capacity_bytes)} capacity. ` +
    'Move to PostgreSQL: audit-trail migrate --data-dir DIR --database-url postgres://...'
}

async function showChainHealth(stats) {
  const broken = stats.total_agents - Math.round(stats.chain_health * stats.total_agents)
  const percent = `${Math.floor(stats.chain_health * 1000) / 10}%`
  fill(
    'stat-health',
    stats.total_agents === 0
      ? 'No chains yet'
      : verdict(
          broken === 0,
          `${percent}: all chains verify`,
          `${percent}: ${broken} of ${stats.total_agents} chains broken`,
        ),
  )
  const notice = byId('broken-agents')
  notice.hidden = broken === 0
  if (broken === 0) return
  const agents = (await getJson('/v1/agents')).filter((agent) => !agent.chain_valid)
  fill(
    'broken-agents',
    'Chain verification fails for: ',
    agents.flatMap((agent, i) => [
      i > 0 ? ', ' : '',
      h('a', {href: `#/events?${new URLSearchParams({agent_id: agent.agent_id})}`}, agent.agent_id),
    ]),
    '. Open an event of the agent and press Verify for the first broken link.',
  )
}

function showTimestamp(check, stats) {
  if (!check.merkle_root) {
    fill('stat-timestamp', 'No timestamp has been issued yet.')
    fill('stat-timestamp-check')
    return
  }
  const since = stats.tree_size - check.tree_size
  fill(
    'stat-timestamp',
    `${formatTime(check.tsa_time)} · tree size ${formatNumber(check.tree_size)}`,
    check.current_root_matches ? ' · covers the current root' : ` · ${formatNumber(since)} events recorded since`,
  )
  // A series that does not hold means the stored history was rewritten after it was signed.
  const seriesOk = check.series_consistent !== false
  const ok = check.valid && check.consistent && seriesOk
  const rewritten =
    check.rewritten_since &&
    `history was rewritten since the timestamp of ${formatTime(check.rewritten_since)}: ${check.series_error}`
  const problem =
    check.error ||
    (!check.consistent && 'the timestamped tree is not a prefix of the current tree') ||
    rewritten ||
    check.series_error
  const reset = check.last_reset
    ? ` Signed history started over at ${formatTime(check.last_reset.timestamp)}: ${check.last_reset.reason}`
    : ''
  fill(
    'stat-timestamp-check',
    verdict(
      ok,
      'Verifies: the TSA signature holds and every timestamped tree is a prefix of the current tree',
      `Does not verify: ${problem}`,
    ),
    reset,
  )
}

/**
 * Events per hour by event `timestamp`, one `limit=1` query per hour read from X-Total-Count:
 * exact counts whatever the volume, without transferring the events themselves. The current hour
 * is counted on every refresh; a finished hour changes only when a client reports an old
 * timestamp, so its count (taken after the hour ended) is reused for RECOUNT_MS.
 */
const RECOUNT_MS = 300_000
const counted = new Map()

async function countPerHour(now) {
  const end = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS
  const hours = Array.from({length: HOURS}, (_, i) => end - (HOURS - i) * HOUR_MS)
  const counts = await Promise.all(
    hours.map(async (start) => {
      const cached = counted.get(start)
      if (cached && cached.at >= start + HOUR_MS && now - cached.at < RECOUNT_MS) return cached.count
      const page = await getPage('/v1/events', {
        since: new Date(start).toISOString(),
        until: new Date(start + HOUR_MS).toISOString(),
        limit: 1,
      })
      counted.set(start, {count: page.total, at: now})
      return page.total
    }),
  )
  for (const start of counted.keys()) if (start < hours[0]) counted.delete(start)
  return hours.map((start, i) => ({start, count: counts[i]}))
}

/** The smallest 1, 2 or 5 times a power of ten at or above n, so the axis labels are round. */
function roundUp(n) {
  const power = 10 ** Math.floor(Math.log10(Math.max(1, n)))
  return [1, 2, 5, 10].map((step) => step * power).find((value) => value >= n)
}

function drawChart(hourly) {
  const width = 1160
  const height = 190
  const left = 44
  const bottom = 24
  const top = 10
  const max = roundUp(Math.max(...hourly.map((bucket) => bucket.count)))
  const total = hourly.reduce((sum, bucket) => sum + bucket.count, 0)
  const peak = hourly.reduce((a, b) => (b.count > a.count ? b : a))
  const slot = (width - left) / hourly.length
  const y = (count) => top + (height - top - bottom) * (1 - count / max)
  const hourLabel = (start) => `${new Date(start).toISOString().slice(11, 13)}:00`

  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label':
      `Bar chart: ${formatNumber(total)} events timestamped in the last 24 hours; busiest hour ` +
      `${hourLabel(peak.start)} UTC with ${formatNumber(peak.count)}.`,
  })
  for (const value of new Set([0, max / 2, max])) {
    chart.append(
      svg('line', {x1: left, x2: width, y1: y(value), y2: y(value), class: 'grid'}),
      svg('text', {x: left - 6, y: y(value) + 4, 'text-anchor': 'end', class: 'axis'}, formatNumber(value)),
    )
  }
  hourly.forEach((bucket, i) => {
    const x = left + i * slot
    chart.append(
      svg(
        'rect',
        {x: x + 3, y: y(bucket.count), width: slot - 6, height: y(0) - y(bucket.count), class: 'bar'},
        svg('title', {}, `${hourLabel(bucket.start)} UTC: ${formatNumber(bucket.count)} events`),
      ),
    )
    if (i % 2 === 0)
      chart.append(
        svg('text', {x: x + slot / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis'}, hourLabel(bucket.start)),
      )
  })
  fill('chart', chart)
}
