/**
 * `npm run screenshots`: starts the service on a temporary data directory, seeds a day of
 * realistic agent activity through the HTTP API, and saves a 1280x800 screenshot of each dashboard
 * view into docs/img/ with headless Chromium (Debian's `chromium`, as in the end-to-end tests).
 */
import {existsSync} from 'node:fs'
import {mkdir, mkdtemp, rm} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {chromium, type Page} from 'playwright-core'
import {dashboardRoutes, isDashboardPath} from '../src/server/routes/dashboard.js'
import {startService, type RunningService} from '../src/server/start.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const OUT_DIR = fileURLToPath(new URL('../docs/img/', import.meta.url))
const HOUR_MS = 3_600_000

/** A small deterministic generator (mulberry32), so every run draws the same day. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Action = [type: string, name: string, weight: number, extra?: (r: () => number) => Record<string, unknown>]

const AGENTS: Record<string, {labels: Record<string, string>; actions: Action[]}> = {
  'support-bot': {
    labels: {env: 'prod', team: 'customer-care', model: 'gpt-4o'},
    actions: [
      [
        'LLM_CALL',
        'chat.completions',
        5,
        (r) => ({input: {messages: 3 + Math.floor(r() * 6)}, output: {tokens: 120 + Math.floor(r() * 600)}}),
      ],
      ['TOOL_CALL', 'orders.lookup', 3, (r) => ({input: {order_id: `ORD-${10000 + Math.floor(r() * 90000)}`}})],
      ['TOOL_CALL', 'kb.search', 3, () => ({input: {query: 'refund policy for damaged items'}})],
      ['MESSAGE', 'reply.customer', 3],
      ['HUMAN_APPROVAL', 'refund.approval', 1, () => ({metadata: {approver: 'j.moreau'}})],
      ['DECISION', 'refund.issue', 1, (r) => ({input: {amount_eur: Math.round(r() * 20000) / 100}})],
    ],
  },
  'billing-agent': {
    labels: {env: 'prod', team: 'finance'},
    actions: [
      ['API_CALL', 'stripe.invoices.create', 3],
      ['DATA_ACCESS', 'customers.read', 4, () => ({labels: {env: 'prod', team: 'finance', pii: 'true'}})],
      ['DECISION', 'discount.apply', 1],
      ['LLM_CALL', 'dunning.draft', 2],
    ],
  },
  'code-reviewer': {
    labels: {env: 'ci', team: 'platform', model: 'claude-sonnet'},
    actions: [
      ['TOOL_CALL', 'git.diff', 3],
      [
        'FILE_ACCESS',
        'repo.read_file',
        4,
        (r) => ({input: {path: ['src/server/app.ts', 'src/core/merkle/tree.ts', 'README.md'][Math.floor(r() * 3)]}}),
      ],
      ['LLM_CALL', 'review.generate', 3],
      ['API_CALL', 'github.comments.create', 2],
    ],
  },
  'research-assistant': {
    labels: {env: 'staging', team: 'research'},
    actions: [
      ['TOOL_CALL', 'web.search', 4, () => ({input: {q: 'RFC 9162 consistency proofs'}})],
      ['TOOL_CALL', 'web.fetch', 3, () => ({input: {url: 'https://www.rfc-editor.org/rfc/rfc9162'}})],
      ['LLM_CALL', 'summarise', 3],
    ],
  },
  'ops-runbook': {
    labels: {env: 'prod', team: 'sre'},
    actions: [
      ['TOOL_CALL', 'shell.exec', 2, () => ({input: {command: 'systemctl restart ingest-worker'}})],
      ['TOOL_CALL', 'kubectl.rollout', 2],
      ['API_CALL', 'pagerduty.incidents.ack', 1],
      ['AGENT_ACTION', 'runbook.step', 3],
    ],
  },
}

const STATUSES: Array<[string, number]> = [
  ['success', 90],
  ['failure', 4],
  ['error', 3],
  ['timeout', 2],
  ['denied', 1],
]

function pick<T>(r: () => number, items: Array<[T, number]>): T {
  const total = items.reduce((sum, [, weight]) => sum + weight, 0)
  let at = r() * total
  for (const [item, weight] of items) {
    at -= weight
    if (at < 0) return item
  }
  return items[items.length - 1]![0]
}

/** About 600 events over the last 24 hours, busier in working hours (UTC). */
function seedEvents(now: number): Array<Record<string, unknown>> {
  const r = random(20261121)
  const events: Array<Record<string, unknown>> = []
  for (let hour = 23; hour >= 0; hour--) {
    const start = now - (hour + 1) * HOUR_MS
    const utcHour = new Date(start).getUTCHours()
    const count = Math.round((utcHour >= 7 && utcHour <= 19 ? 30 : 8) * (0.6 + r() * 0.8))
    const times = Array.from({length: count}, () => start + r() * HOUR_MS).sort((a, b) => a - b)
    for (const time of times) {
      const agent = pick(
        r,
        Object.keys(AGENTS).map((name) => [name, name === 'support-bot' ? 4 : 2] as [string, number]),
      )
      const {labels, actions} = AGENTS[agent]!
      const [action_type, action_name, , extra] = pick(
        r,
        actions.map((action) => [action, action[2]] as [Action, number]),
      )
      const action_status = pick(r, STATUSES)
      events.push({
        agent_id: agent,
        action_type,
        action_name,
        action_status,
        timestamp: new Date(time).toISOString(),
        labels,
        session_id: `sess-${agent.slice(0, 3)}-${Math.floor(time / (2 * HOUR_MS)) % 1000}`,
        duration_ms: Math.round(20 + r() * (action_type === 'LLM_CALL' ? 4000 : 600)),
        ...(action_status === 'success'
          ? {}
          : {
              error:
                action_status === 'timeout'
                  ? 'upstream did not answer within 30 s'
                  : `${action_name} returned ${action_status}`,
            }),
        ...extra?.(r),
      })
    }
  }
  return withRefund(events)
}

/**
 * The event-detail view is shot from a refund.issue link on the first page of support-bot's
 * events (the oldest 25). Which actions the draws above pick depends on the UTC hour the day
 * starts at, so one refund is placed among them, after support-bot's sixth event, whatever the hour.
 */
function withRefund(events: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const positions = events.flatMap((event, i) => (event.agent_id === 'support-bot' ? [i] : []))
  const after = positions[5]!
  const time = (i: number) => Date.parse(events[i]!.timestamp as string)
  const at = after + 1 < events.length ? (time(after) + time(after + 1)) / 2 : time(after) + 1000
  const {agent_id, labels, session_id} = events[after]!
  const refund = {
    agent_id,
    action_type: 'DECISION',
    action_name: 'refund.issue',
    action_status: 'success',
    timestamp: new Date(Math.round(at)).toISOString(),
    labels,
    session_id,
    duration_ms: 212,
    input: {amount_eur: 84.9},
  }
  return [...events.slice(0, after + 1), refund, ...events.slice(after + 1)]
}

async function post(service: RunningService, requestPath: string, body?: unknown): Promise<any> {
  const response = await fetch(`${service.url}${requestPath}`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`POST ${requestPath}: ${response.status} ${await response.text()}`)
  return response.json()
}

async function waitForText(page: Page, selector: string, pattern: RegExp): Promise<void> {
  await page.waitForFunction(
    ([s, source]) => new RegExp(source as string).test(document.querySelector(s as string)?.textContent ?? ''),
    [selector, pattern.source],
    {timeout: 15_000},
  )
}

async function shoot(page: Page, name: string): Promise<void> {
  // Each view fetches its data after the page has loaded (docs/dashboard.md, "Screenshots").
  await page.waitForSelector('#loading', {state: 'hidden'})
  await page.waitForLoadState('networkidle')
  await page.mouse.move(0, 0)
  await page.screenshot({path: path.join(OUT_DIR, `${name}.png`)})
  console.log(`docs/img/${name}.png`)
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (or set CHROMIUM_PATH)`)
  await mkdir(OUT_DIR, {recursive: true})
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrail-screenshots-'))
  const service = await startService({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    app: {extraRouters: [dashboardRoutes()], isPublic: isDashboardPath},
  })
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  try {
    const events = seedEvents(Date.now())
    for (let i = 0; i < events.length; i += 500) await post(service, '/v1/batch', events.slice(i, i + 500))
    await post(service, '/v1/timestamp')
    // A second trail, so that the header shows the trail picker (docs/dashboard.md).
    await post(service, '/v1/trails', {name: 'payments'})

    const page = await browser.newPage({viewport: {width: 1280, height: 800}})
    await page.goto(`${service.url}/#/overview`)
    await waitForText(page, '#stat-timestamp-check', /Verifies/)
    await page.waitForSelector('#chart svg')
    await shoot(page, 'overview')

    await page.goto(`${service.url}/#/agents`)
    await page.waitForSelector('#agents-body tr')
    await shoot(page, 'agents')

    await page.goto(`${service.url}/#/events?agent_id=support-bot&limit=25`)
    await waitForText(page, '#events-summary', /^Showing/)
    await shoot(page, 'events')

    await page.getByRole('link', {name: 'refund.issue'}).first().click()
    await page.getByRole('button', {name: 'Verify'}).click()
    await waitForText(page, '#verify-result', /Inclusion proof/)
    await shoot(page, 'event-detail')

    await page.goto(`${service.url}/#/policy`)
    await page.getByRole('button', {name: 'Run check'}).click()
    await waitForText(page, '#policy-result', /rules/)
    await shoot(page, 'policy')

    await page.goto(`${service.url}/#/live`)
    await waitForText(page, '#live-status', /Connected/)
    for (const [i, event] of seedEvents(Date.now()).slice(-6).entries()) {
      await post(service, '/v1/events', {...event, timestamp: new Date().toISOString()})
      if (i === 2) await post(service, '/v1/timestamp')
      await page.waitForTimeout(150)
    }
    await waitForText(page, '#live-count', /received/)
    await page.waitForTimeout(300)
    await shoot(page, 'live')
  } finally {
    await browser.close()
    await service.close()
    await rm(dataDir, {recursive: true, force: true})
  }
}

await main()
