/**
 * The dashboard's Approvals page (docs/oversight.md) in headless Chromium: a call held by
 * `mcp-proxy` shows live with its arguments; Approve on the page forwards it, the SDK client gets
 * the server's answer, and the history names who decided. Chromium is Debian's /usr/bin/chromium,
 * as in dashboard.test.ts.
 */
import {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {expect} from 'chai'
import type {Browser} from 'playwright-core'
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {dashboardRoutes, isDashboardPath} from '../../src/server/routes/dashboard.js'
import {startService, type RunningService} from '../../src/server/start.js'
import {launchChromium} from '../support/browser.js'
import {removeDir, tempDir} from '../support/harness.js'
import {newClient, startEverythingHttp, startHttpProxy, type Started} from '../support/mcp.js'
import {APPROVER, holdingPolicy, WRITER} from '../oversight/support.js'

describe('dashboard approvals page (headless Chromium)', function () {
  this.timeout(90_000)
  let browser: Browser
  let dir: string
  let service: RunningService
  let upstream: Started & {url: string}
  let proxy: Started & {url: string}

  before(async () => {
    browser = await launchChromium()
    dir = await tempDir('atrail-approvals-')
    service = await startService({
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      apiKeys: parseKeyFile(`${WRITER} read,write\n${APPROVER} read,approve name=alice\n`),
      app: {extraRouters: [dashboardRoutes()], isPublic: isDashboardPath, logError: () => {}},
    })
    upstream = await startEverythingHttp()
    proxy = await startHttpProxy(upstream.url, [
      ...['--server', service.url, '--api-key', WRITER, '--policy', await holdingPolicy(dir)],
      ...['--state-dir', dir],
    ])
  })
  after(async () => {
    await proxy?.stop()
    await upstream?.stop()
    await browser?.close()
    await service?.close()
    if (dir !== undefined) await removeDir(dir)
  })

  it('shows a held call live with its arguments; Approve forwards it and the history says who', async () => {
    const errors: string[] = []
    const page = await (await browser.newContext()).newPage()
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${service.url}/#/approvals`)
    await page.getByLabel('API key', {exact: true}).fill(APPROVER)
    await page.getByRole('button', {name: 'Continue'}).click()
    await page.getByText('No call waits for a decision.').waitFor()

    const client = newClient('billing-bot')
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)))
    try {
      const call = client.callTool({name: 'echo', arguments: {message: 'refund 120 EUR'}})
      const card = page.locator('#approvals-pending li')
      await card.waitFor()
      expect(await card.locator('h3').textContent()).to.equal('billing-bot: echo')
      expect(await card.locator('pre').textContent()).to.contain('"message": "refund 120 EUR"')

      await card.getByLabel('Reason (recorded with the decision)').fill('ticket 42')
      await card.getByRole('button', {name: 'Approve'}).click()
      const result = await call
      expect(JSON.stringify(result.content)).to.contain('refund 120 EUR')

      await page.getByText('No call waits for a decision.').waitFor()
      const row = page.locator('#approvals-history tr').first()
      await row.waitFor()
      const cells = await row.locator('td').allTextContents()
      expect(cells.slice(1, 7)).to.deep.equal(['billing-bot', 'echo', 'hold-echo', 'approved', 'alice', 'ticket 42'])
      expect(errors).to.deep.equal([])
    } finally {
      await client.close()
    }
  })
})
