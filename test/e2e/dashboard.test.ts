/**
 * The dashboard end to end (issue 9): the real service on a fresh data directory, driven in
 * headless Chromium through playwright-core. The browser is Debian's `chromium` at
 * /usr/bin/chromium (`.ci/run` installs it); without it these tests fail rather than skip, so a
 * missing browser never passes silently.
 */
import {execFileSync} from 'node:child_process'
import {readFile, readdir, rm} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import type {Browser, BrowserContext, Page} from 'playwright-core'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {dashboardRoutes, isDashboardPath} from '../../src/server/routes/dashboard.js'
import {startService, type RunningService} from '../../src/server/start.js'
import {launchChromium} from '../support/browser.js'
import {removeDir, tempDir} from '../support/harness.js'

const KEY = 'dashboard-test-key-0123456789'
const READ_ONLY_KEY = 'dashboard-read-only-key-0123'

async function start(dataDir: string, apiKeys?: string): Promise<RunningService> {
  return startService({
    dataDir,
    host: '127.0.0.1',
    port: 0,
    apiKeys: apiKeys === undefined ? undefined : parseKeyFile(apiKeys),
    app: {extraRouters: [dashboardRoutes()], isPublic: isDashboardPath, logError: () => {}},
  })
}

async function api(
  service: RunningService,
  method: string,
  requestPath: string,
  body?: unknown,
  key?: string,
): Promise<any> {
  const headers: Record<string, string> = {'content-type': 'application/json'}
  if (key) headers.authorization = `Bearer ${key}`
  const response = await fetch(`${service.url}${requestPath}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  expect(response.status, `${method} ${requestPath}`).to.be.within(200, 299)
  return response.json()
}

const minutesAgo = (n: number): string => new Date(Date.now() - n * 60_000).toISOString()

/**
 * 12 events: alpha 6, beta 4, gamma 2. LLM_CALL: 3 (alpha 2, beta 1). env=prod: 7.
 * "invoice" appears in 3 action names. Every timestamp lies within the last hours.
 */
function seedEvents(): Array<Record<string, unknown>> {
  const e = (
    agent_id: string,
    action_type: string,
    action_name: string,
    env: string,
    minutes: number,
    extra: Record<string, unknown> = {},
  ) => ({agent_id, action_type, action_name, labels: {env}, timestamp: minutesAgo(minutes), ...extra})
  return [
    e('alpha', 'TOOL_CALL', 'read_file', 'prod', 300, {input: {path: '/srv/report.csv'}}),
    e('alpha', 'LLM_CALL', 'chat', 'prod', 290),
    e('beta', 'API_CALL', 'fetch_invoice', 'prod', 240),
    e('alpha', 'TOOL_CALL', 'read_file', 'prod', 200),
    e('beta', 'API_CALL', 'fetch_invoice', 'prod', 180),
    e('gamma', 'FILE_ACCESS', 'open_report', 'dev', 150),
    e('alpha', 'LLM_CALL', 'chat', 'prod', 120),
    e('beta', 'API_CALL', 'fetch_invoice', 'prod', 90),
    e('alpha', 'TOOL_CALL', 'write_file', 'dev', 60),
    e('beta', 'LLM_CALL', 'summarise', 'dev', 45),
    e('gamma', 'MESSAGE', 'notify', 'dev', 30, {action_status: 'error', error: 'smtp refused'}),
    e('alpha', 'DECISION', 'approve_refund', 'dev', 10, {action_status: 'failure'}),
  ]
}

/** Polls the text of the first element matching `selector` until it matches, for up to 8 s. */
async function expectText(page: Page, selector: string, expected: string | RegExp): Promise<string> {
  const deadline = Date.now() + 8000
  let actual: string | null = null
  while (Date.now() < deadline) {
    actual = await page.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector)
    if (actual !== null && (typeof expected === 'string' ? actual === expected : expected.test(actual))) return actual
    await page.waitForTimeout(50)
  }
  expect.fail(`${selector}: expected ${String(expected)}, found ${JSON.stringify(actual)}`)
}

async function rowCount(page: Page, tbody: string): Promise<number> {
  return page.evaluate((s) => document.querySelector(s)!.querySelectorAll('tr').length, tbody)
}

async function columnTexts(page: Page, tbody: string, column: number): Promise<string[]> {
  return page.evaluate(
    ([s, c]) =>
      [...document.querySelector(s as string)!.querySelectorAll('tr')].map(
        (row) => row.children[c as number]!.textContent ?? '',
      ),
    [tbody, column] as const,
  )
}

describe('dashboard (headless Chromium)', function () {
  this.timeout(30_000)
  let browser: Browser
  const contexts: BrowserContext[] = []
  const pageErrors: string[] = []

  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({viewport: {width: 1280, height: 800}, acceptDownloads: true})
    contexts.push(context)
    const page = await context.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('console', (message) => {
      if (
        message.type() === 'error' &&
        !/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())
      )
        pageErrors.push(message.text())
    })
    return page
  }
  afterEach(async () => {
    while (contexts.length) await contexts.pop()!.close()
    const errors = pageErrors.splice(0)
    expect(errors, 'errors in the page').to.deep.equal([])
  })

  describe('static files', () => {
    let service: RunningService
    let dataDir: string
    before(async () => {
      dataDir = await tempDir('atrail-dash-')
      service = await start(dataDir, `${KEY}\n`)
    })
    after(async () => {
      await service.close()
      await removeDir(dataDir)
    })

    it('serves the allow-listed files without a key, with their types and Cache-Control: no-cache', async () => {
      for (const [file, type] of [
        ['/', 'text/html'],
        ['/app.js', 'text/javascript'],
        ['/style.css', 'text/css'],
        ['/favicon.svg', 'image/svg+xml'],
      ]) {
        const response = await fetch(`${service.url}${file}`)
        expect(response.status, file).to.equal(200)
        expect(response.headers.get('content-type'), file).to.contain(type)
        expect(response.headers.get('cache-control'), file).to.equal('no-cache')
        expect(response.headers.get('content-security-policy'), file).to.contain("script-src 'self'")
      }
      const html = await (await fetch(`${service.url}/`)).text()
      expect(html).to.contain('<script type="module" src="app.js">')
    })

    it('answers 304 to a matching ETag and HEAD without a body', async () => {
      const first = await fetch(`${service.url}/app.js`)
      const etag = first.headers.get('etag')!
      expect(etag).to.match(/^"[0-9a-f]{32}"$/)
      // An explicit Cache-Control, or fetch adds `no-cache`, which rules out a 304 (RFC 9111 5.2.1.4).
      const again = await fetch(`${service.url}/app.js`, {
        headers: {'if-none-match': etag, 'cache-control': 'max-age=0'},
      })
      expect(again.status).to.equal(304)
      const head = await fetch(`${service.url}/`, {method: 'HEAD'})
      expect(head.status).to.equal(200)
      expect(await head.text()).to.equal('')
    })

    it('serves nothing outside the allow-list, and the API still needs the key', async () => {
      for (const file of [
        '/package.json',
        '/public/app.js',
        '/..%2fpackage.json',
        '/%2e%2e/package.json',
        '/src/server/app.ts',
        '/v1/stats',
      ]) {
        const response = await fetch(`${service.url}${file}`)
        expect(response.status, file).to.equal(401)
      }
      const keyed = await fetch(`${service.url}/package.json`, {headers: {authorization: `Bearer ${KEY}`}})
      expect(keyed.status).to.equal(404)
      const post = await fetch(`${service.url}/`, {method: 'POST'})
      expect(post.status).to.equal(401)
    })

    it('isDashboardPath admits GET and HEAD of the listed paths only', () => {
      expect(isDashboardPath('/', 'GET')).to.equal(true)
      expect(isDashboardPath('/app.js', 'HEAD')).to.equal(true)
      expect(isDashboardPath('/', 'POST')).to.equal(false)
      expect(isDashboardPath('/v1/events', 'GET')).to.equal(false)
      expect(isDashboardPath('/healthz', 'GET')).to.equal(false)
      expect(isDashboardPath('/app.js/', 'GET')).to.equal(false)
      expect(isDashboardPath('/dashboard.ts', 'GET')).to.equal(false)
    })
  })

  describe('with seeded data', () => {
    let service: RunningService
    let dataDir: string
    before(async () => {
      dataDir = await tempDir('atrail-dash-')
      service = await start(dataDir)
      await api(service, 'POST', '/v1/batch', seedEvents())
    })
    after(async () => {
      await service.close()
      await removeDir(dataDir)
    })

    it('the overview shows the numbers of the seeded data', async () => {
      const root = await api(service, 'GET', '/v1/merkle/root')
      const page = await newPage()
      await page.goto(`${service.url}/`)
      await expectText(page, '#stat-total', '12')
      await expectText(page, '#stat-recent', '12')
      await expectText(page, '#stat-active', '3 of 3')
      await expectText(page, '#stat-tree-size', '12')
      await expectText(page, '#stat-health', /100%: all chains verify/)
      await expectText(page, '#stat-root', root.merkle_root)
      await expectText(page, '#stat-timestamp', 'No timestamp has been issued yet.')
      // The chart counts by event timestamp, all 12 within the last 24 hours.
      await page.waitForSelector('#chart svg')
      const label = await page.getAttribute('#chart svg', 'aria-label')
      expect(label).to.match(/^Bar chart: 12 events timestamped in the last 24 hours/)
      // The card counts by recorded_at, the chart by timestamp: each says which time it counts by.
      expect(await page.textContent('dt:has(+ #stat-recent)')).to.equal('Recorded in the last 24 h')
      expect(await page.textContent('#chart-title')).to.equal('Events per hour of their timestamp, last 24 hours')
      expect(await page.textContent('#chart-hint')).to.match(
        /own timestamp; "Recorded in the\s+last 24 h" counts by when/,
      )
      const bars = await page.$$eval('#chart rect.bar title', (titles) =>
        titles.map((t) => Number(/: (\d+) events/.exec(t.textContent!)![1])),
      )
      expect(bars).to.have.length(24)
      expect(bars.reduce((a, b) => a + b, 0)).to.equal(12)
    })

    it('the agents view lists each chain; selecting an agent opens its events', async () => {
      const page = await newPage()
      await page.goto(`${service.url}/#/agents`)
      await page.waitForSelector('#agents-body tr')
      expect(await columnTexts(page, '#agents-body', 0)).to.deep.equal(['alpha', 'beta', 'gamma'])
      expect(await columnTexts(page, '#agents-body', 1)).to.deep.equal(['6', '4', '2'])
      expect(await columnTexts(page, '#agents-body', 6)).to.deep.equal(['✓ verifies', '✓ verifies', '✓ verifies'])
      await page.getByRole('link', {name: 'beta', exact: true}).click()
      await expectText(page, '#events-summary', 'Showing 1–4 of 4 events')
      expect(await columnTexts(page, '#events-body', 2)).to.deep.equal(['beta', 'beta', 'beta', 'beta'])
      expect(await page.inputValue('#filter-agent')).to.equal('beta')
    })

    it('works from the keyboard: navigation moves focus to the view heading', async () => {
      const page = await newPage()
      await page.goto(`${service.url}/`)
      await expectText(page, '#stat-total', '12')
      await page.keyboard.press('Tab')
      await page.keyboard.press('Tab')
      expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Agents')
      await page.keyboard.press('Enter')
      await page.waitForSelector('#agents-body tr')
      expect(await page.evaluate(() => document.activeElement?.id)).to.equal('agents-title')
      await page.keyboard.press('Tab')
      expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('alpha')
      await page.keyboard.press('Enter')
      await expectText(page, '#events-summary', 'Showing 1–6 of 6 events')
    })

    it('filters, search and paging narrow the events table', async () => {
      const page = await newPage()
      await page.goto(`${service.url}/#/events`)
      await expectText(page, '#events-summary', 'Showing 1–12 of 12 events')
      expect(await rowCount(page, '#events-body')).to.equal(12)

      await page.getByLabel('Action type').fill('LLM_CALL')
      await page.getByRole('button', {name: 'Apply filters'}).click()
      await expectText(page, '#events-summary', 'Showing 1–3 of 3 events')
      expect(await columnTexts(page, '#events-body', 4)).to.deep.equal(['LLM_CALL', 'LLM_CALL', 'LLM_CALL'])

      await page.getByLabel('Agent', {exact: true}).fill('alpha')
      await page.getByRole('button', {name: 'Apply filters'}).click()
      await expectText(page, '#events-summary', 'Showing 1–2 of 2 events')

      await page.getByRole('button', {name: 'Clear'}).click()
      await expectText(page, '#events-summary', 'Showing 1–12 of 12 events')
      await page.getByLabel('Labels').fill('env=prod')
      await page.getByRole('button', {name: 'Apply filters'}).click()
      await expectText(page, '#events-summary', 'Showing 1–7 of 7 events')

      // since is inclusive, until exclusive, both on the event timestamp (UTC inputs).
      await page.getByRole('button', {name: 'Clear'}).click()
      await expectText(page, '#events-summary', 'Showing 1–12 of 12 events')
      await page.getByLabel('Since (UTC)').fill(minutesAgo(100).slice(0, 19))
      await page.getByRole('button', {name: 'Apply filters'}).click()
      await expectText(page, '#events-summary', 'Showing 1–5 of 5 events')

      await page.getByRole('button', {name: 'Clear'}).click()
      await expectText(page, '#events-summary', 'Showing 1–12 of 12 events')
      await page.getByLabel('Search events').fill('invoice')
      await page.getByRole('button', {name: 'Search', exact: true}).click()
      await expectText(page, '#events-summary', /^Showing 1–3 of 3 events matching “invoice”/)
      expect(await columnTexts(page, '#events-body', 5)).to.deep.equal([
        'fetch_invoice',
        'fetch_invoice',
        'fetch_invoice',
      ])

      await page.getByRole('button', {name: 'Clear'}).click()
      await expectText(page, '#events-summary', 'Showing 1–12 of 12 events')
      await page.getByLabel('Per page').selectOption('10')
      await expectText(page, '#events-summary', 'Showing 1–10 of 12 events')
      expect(await page.isDisabled('#page-prev')).to.equal(true)
      await page.getByRole('button', {name: 'Next →'}).click()
      await expectText(page, '#events-summary', 'Showing 11–12 of 12 events')
      expect(await columnTexts(page, '#events-body', 0)).to.deep.equal(['10', '11'])
      expect(await page.isDisabled('#page-next')).to.equal(true)
    })

    it('the event detail shows hash, previous hash and inclusion proof, and Verify checks both', async () => {
      const listed = await api(service, 'GET', '/v1/events?agent_id=alpha')
      const second = listed[1]
      const proof = await api(service, 'GET', `/v1/merkle/proof/${second.id}`)
      const page = await newPage()
      await page.goto(`${service.url}/#/events?agent_id=alpha`)
      await page.waitForSelector('#events-body tr')
      await page.locator('#events-body tr').nth(1).getByRole('link', {name: 'chat'}).click()
      await expectText(page, '#event-hash', second.hash)
      await expectText(page, '#event-prev-hash', listed[0].hash)
      expect(await page.$$eval('#proof-path code', (codes) => codes.map((c) => c.textContent))).to.deep.equal(
        proof.audit_path,
      )
      await page.getByRole('button', {name: 'Verify'}).click()
      await expectText(
        page,
        '#verify-result li:first-child',
        '✓ Chain of alpha verifies: 6 events recomputed, head sequence 6.',
      )
      await expectText(
        page,
        '#verify-result li:last-child',
        `✓ Inclusion proof recomputed in this browser: leaf 1 is in the tree of size 12 with root ` +
          `${proof.merkle_root.slice(0, 16)}…`,
      )
    })

    it('recomputes RFC 9162 inclusion proofs in the browser as the service does, rejects altered ones', async () => {
      const events = await api(service, 'GET', '/v1/events')
      const proofs = await Promise.all(
        events.map((event: {id: string}) => api(service, 'GET', `/v1/merkle/proof/${event.id}`)),
      )
      const page = await newPage()
      await page.goto(`${service.url}/`)
      const cases = events.map((event: {hash: string}, i: number) => ({eventHash: event.hash, proof: proofs[i]}))
      // No named helpers inside: the page runs this function's source, without tsx's helpers.
      const results = await page.evaluate(
        async ([moduleUrl, list]) => {
          const merkle = await import(moduleUrl as string)
          const out = []
          for (const {eventHash, proof} of list as Array<{eventHash: string; proof: any}>) {
            const leaf = await merkle.leafHash(eventHash)
            const path: string[] = proof.audit_path
            const altered = [(path[0]![0] === '0' ? '1' : '0') + path[0]!.slice(1), ...path.slice(1)]
            out.push({
              leaf: leaf === proof.leaf_hash,
              root:
                (await merkle.rootFromInclusionProof(proof.leaf_index, proof.tree_size, leaf, path)) ===
                proof.merkle_root,
              alteredPath:
                (await merkle.rootFromInclusionProof(proof.leaf_index, proof.tree_size, leaf, altered)) ===
                proof.merkle_root,
              wrongIndex:
                (await merkle.rootFromInclusionProof(proof.leaf_index ^ 1, proof.tree_size, leaf, path)) ===
                proof.merkle_root,
              extraNode:
                (await merkle.rootFromInclusionProof(proof.leaf_index, proof.tree_size, leaf, [...path, leaf])) ===
                proof.merkle_root,
            })
          }
          return out
        },
        [`${service.url}/merkle.js`, cases] as const,
      )
      expect(results).to.have.length(12)
      for (const result of results)
        expect(result).to.deep.equal({leaf: true, root: true, alteredPath: false, wrongIndex: false, extraNode: false})
    })

    it('the policy form shows results, and errors for bad JSON or rules', async () => {
      const page = await newPage()
      await page.goto(`${service.url}/#/policy`)
      const input = page.getByLabel(/^Policies/)
      await input.fill(
        JSON.stringify([
          {name: 'no-llm', type: 'forbidden_action', match: {action_type: 'LLM_CALL'}},
          {name: 'chains', type: 'chain_integrity'},
        ]),
      )
      await page.getByRole('button', {name: 'Run check'}).click()
      await expectText(page, '#policy-result .summary', '✗ Failed: 1 of 2 rules violated over 12 events.')
      expect(await columnTexts(page, '#policy-result tbody', 3)).to.deep.equal(['3', '0'])
      expect(await page.$$eval('#policy-result .violations li', (items) => items.length)).to.equal(3)

      await input.fill('{"policies": [')
      await page.getByRole('button', {name: 'Run check'}).click()
      await expectText(page, '#policy-result', /^The policies are not valid JSON/)

      await input.fill('{"policies": [{"name": "x", "type": "no_such_rule"}]}')
      await page.getByRole('button', {name: 'Run check'}).click()
      await expectText(page, '#policy-result', /^The service rejected the policies: .*"x"/)
    })

    it('downloads an evidence package of every event', async () => {
      const page = await newPage()
      await page.goto(`${service.url}/`)
      await expectText(page, '#stat-total', '12')
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', {name: 'Download evidence package'}).click(),
      ])
      expect(download.suggestedFilename()).to.match(/^audit-trail-\d{8}T\d{6}Z\.atrail\.json$/)
      const evidence = JSON.parse(await readFile(await download.path(), 'utf8'))
      expect(evidence.format).to.equal('atrail-evidence')
      expect(evidence.events).to.have.length(12)
      await expectText(page, '#message', /^Downloaded audit-trail-/)
    })

    it('requests a timestamp and shows that it verifies', async () => {
      const page = await newPage()
      await page.goto(`${service.url}/`)
      await expectText(page, '#stat-timestamp', 'No timestamp has been issued yet.')
      await page.getByRole('button', {name: 'Request timestamp'}).click()
      await expectText(page, '#message', /^Timestamp issued by .+ for tree size 12\.$/)
      await expectText(page, '#stat-timestamp', /tree size 12 · covers the current root$/)
      await expectText(page, '#stat-timestamp-check', /^✓ Verifies/)
    })

    it('an event posted through the API appears in the live view', async () => {
      const page = await newPage()
      await page.goto(`${service.url}/#/live`)
      await expectText(page, '#live-status', /^● Connected/)
      // The backlog: the last stored events, newest first.
      await expectText(page, '#live-body tr:first-child td:nth-child(6)', 'approve_refund')
      await api(service, 'POST', '/v1/events', {agent_id: 'delta', action_type: 'TOOL_CALL', action_name: 'live-probe'})
      await expectText(page, '#live-body tr:first-child td:nth-child(6)', 'live-probe')
      await expectText(page, '#live-body tr:first-child td:nth-child(3)', 'delta')
      await expectText(page, '#live-count', '· 13 events received')
    })

    it('shows attacker-controlled fields as text, never as markup', async () => {
      const hostile = '<img src=x onerror="window.__pwned=1"><b>bold</b>'
      const event = await api(service, 'POST', '/v1/events', {
        agent_id: '<script>window.__pwned=2</script>',
        action_type: 'TOOL_CALL',
        action_name: hostile,
        labels: {note: '<i>x</i>'},
      })
      const page = await newPage()
      await page.goto(`${service.url}/#/events?agent_id=${encodeURIComponent(event.agent_id)}`)
      await expectText(page, '#events-body tr td:nth-child(6)', hostile)
      await page.getByRole('link', {name: hostile}).click()
      await expectText(page, '#event-title', `Event ${event.agent_id} #1: ${hostile}`)
      expect(
        await page.evaluate(() => document.querySelectorAll('main img, main b, main script, main i').length),
      ).to.equal(0)
      expect(await page.evaluate(() => (window as unknown as {__pwned?: number}).__pwned)).to.equal(undefined)
    })
  })

  describe('a run (one trace)', () => {
    let runService: RunningService
    let runDir: string
    before(async () => {
      runDir = await tempDir('atrail-dash-')
      runService = await start(runDir)
    })
    after(async () => {
      await runService.close()
      await removeDir(runDir)
    })

    it('the run view shows a trace as a tree, logs in place, chain positions, and verifies every proof', async () => {
      const trace = '4bf92f3577b34da6a3ce929d0e0e4736'
      const span = (n: number) => n.toString(16).padStart(16, '0')
      const gamma = {agent_id: 'gamma', trace_id: trace}
      const details = 'gen_ai.client.inference.operation.details'
      const recorded = await api(runService, 'POST', '/v1/batch', [
        {...gamma, action_type: 'TOOL_CALL', action_name: 'crm.lookup', span_id: span(2), parent_id: span(1)},
        {...gamma, action_type: 'MESSAGE', action_name: details, span_id: span(2), metadata: {log_record: true}},
        {...gamma, action_type: 'AGENT_ACTION', action_name: 'invoke_agent gamma', span_id: span(1)},
      ])
      const root = recorded[2].event
      const page = await newPage()
      await page.goto(`${runService.url}/#/events/${root.id}`)
      await page.getByRole('link', {name: trace}).click()
      await expectText(page, '#run-summary', '3 events in the chains of gamma.')
      // invoke_agent, under it the tool call, under that its log record: whatever the recording order.
      const outline = await page.$$eval('#run-tree .run-node', (nodes) =>
        nodes.map((node) => {
          let depth = 0
          for (let parent = node.parentElement; parent && parent.id !== 'run-tree'; parent = parent.parentElement) {
            if (parent.tagName === 'UL') depth++
          }
          return `${depth} ${node.querySelector('a')!.textContent} ${node.querySelector('.run-chain')!.textContent}`
        }),
      )
      expect(outline).to.deep.equal([
        `0 invoke_agent gamma gamma #3`,
        `1 crm.lookup gamma #1`,
        `2 gen_ai.client.inference.operation.details gamma #2`,
      ])
      await page.getByRole('button', {name: 'Verify proofs'}).click()
      await expectText(page, '#run-verify-result', '✓ 3 inclusion proofs recomputed in this browser.')
      const proofs = await page.$$eval('#run-tree .run-proof', (slots) => slots.map((slot) => slot.textContent))
      expect(proofs).to.deep.equal([' ✓ proof', ' ✓ proof', ' ✓ proof'])
      await page.getByRole('link', {name: 'As a table, with its evidence package'}).click()
      await expectText(page, '#events-summary', 'Showing 1–3 of 3 events')
      expect(await page.inputValue('#filter-trace')).to.equal(trace)
    })
  })

  it('tampered data shows a broken chain', async () => {
    const dataDir = await tempDir('atrail-dash-')
    try {
      let service = await start(dataDir)
      await api(service, 'POST', '/v1/batch', seedEvents())
      await service.close()
      // Change alpha's second event in the snapshot and drop the journal, so replay cannot restore it.
      execFileSync('sqlite3', [
        path.join(dataDir, 'events.sqlite'),
        "update events set action_name='tampered' where agent_id='alpha' and sequence=2",
      ])
      for (const name of await readdir(dataDir)) {
        if (/journal|wal/i.test(name)) await rm(path.join(dataDir, name), {recursive: true, force: true})
      }
      service = await start(dataDir)
      try {
        const page = await newPage()
        await page.goto(`${service.url}/`)
        await expectText(page, '#stat-health', /^✗ 66\.6%: 1 of 3 chains broken$/)
        await expectText(page, '#broken-agents', /^Chain verification fails for: alpha\./)
        await page.getByRole('link', {name: 'Agents'}).click()
        await page.waitForSelector('#agents-body tr')
        expect(await columnTexts(page, '#agents-body', 6)).to.deep.equal(['✗ broken', '✓ verifies', '✓ verifies'])
        await page.goto(`${service.url}/#/events?agent_id=alpha`)
        await page.getByRole('link', {name: 'tampered'}).click()
        await page.getByRole('button', {name: 'Verify'}).click()
        await expectText(
          page,
          '#verify-result',
          /✗ Chain of alpha is broken at this event: hash mismatch at sequence 2\./,
        )
      } finally {
        await service.close()
      }
    } finally {
      await removeDir(dataDir)
    }
  })

  it('the event view shows an erased member as erased, with the erasure time and reason', async () => {
    const dataDir = await tempDir('atrail-dash-')
    const service = await start(dataDir)
    try {
      const [first] = await api(service, 'POST', '/v1/batch', seedEvents())
      const erased = await api(service, 'POST', '/v1/erasures', {
        ids: [first.event.id],
        members: ['input'],
        reason: 'customer asked (ticket 4711)',
      })
      const page = await newPage()
      await page.goto(`${service.url}/#/events/${first.event.id}`)
      await expectText(
        page,
        '#event-content [data-erased="input"]',
        `erased on ${erased.erasure.recorded_at.replace('T', ' ').replace(/\.\d+Z$/, '')} UTC: customer asked ` +
          `(ticket 4711) (erasure ${erased.erasure.id}); its commitment still holds`,
      )
      expect(await page.textContent('#event-content')).to.not.include('/srv/report.csv')
      await page.getByRole('link', {name: erased.erasure.id}).click()
      await expectText(page, '#event-title', /^Event audit-trail:erasures #1: payload\.erase$/)
    } finally {
      await service.close()
      await removeDir(dataDir)
    }
  })

  it('with auth, asks for a key, shows no data without it, then shows the data', async () => {
    const dataDir = await tempDir('atrail-dash-')
    const service = await start(dataDir, `${KEY}\n${READ_ONLY_KEY} read\n`)
    try {
      await api(service, 'POST', '/v1/batch', seedEvents(), KEY)
      const page = await newPage()
      await page.goto(`${service.url}/`)
      await page.getByLabel('API key', {exact: true}).waitFor()
      expect(await page.isHidden('#overview-view')).to.equal(true)
      expect(await page.isHidden('#nav')).to.equal(true)
      expect(await page.textContent('#stat-total')).to.equal('–')

      await page.getByLabel('API key', {exact: true}).fill('not-the-right-key-000000')
      await page.getByRole('button', {name: 'Continue'}).click()
      await expectText(page, '#auth-error', 'The service did not accept that key.')
      expect(await page.isHidden('#overview-view')).to.equal(true)

      await page.getByLabel('API key', {exact: true}).fill(READ_ONLY_KEY)
      await page.getByRole('button', {name: 'Continue'}).click()
      await expectText(page, '#stat-total', '12')
      expect(await page.evaluate(() => sessionStorage.getItem('audit-trail.api-key'))).to.equal(READ_ONLY_KEY)

      // A read-only key may look but not timestamp: the 403 is reported, the key kept.
      await page.getByRole('button', {name: 'Request timestamp'}).click()
      await expectText(page, '#message', /^Error 403: .*write/)

      // The live view passes the key as access_token.
      await page.getByRole('link', {name: 'Live'}).click()
      await expectText(page, '#live-status', /^● Connected/)
      await api(
        service,
        'POST',
        '/v1/events',
        {agent_id: 'delta', action_type: 'TOOL_CALL', action_name: 'with-key'},
        KEY,
      )
      await expectText(page, '#live-body tr:first-child td:nth-child(6)', 'with-key')

      // A reload keeps the key for the tab; forgetting it asks again.
      await page.reload()
      await expectText(page, '#live-status', /^● Connected/)
      await page.getByRole('button', {name: 'Forget API key'}).click()
      await page.getByLabel('API key', {exact: true}).waitFor()
      expect(await page.evaluate(() => sessionStorage.getItem('audit-trail.api-key'))).to.equal(null)
    } finally {
      await service.close()
      await removeDir(dataDir)
    }
  })
})
