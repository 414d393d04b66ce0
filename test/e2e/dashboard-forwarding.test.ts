/**
 * The overview's forwarding panel in headless Chromium (playwright-core, Debian's `chromium` at
 * /usr/bin/chromium, as test/e2e/dashboard.test.ts): a real `serve --forward` to an in-test
 * webhook shows the destination, its position and lag, and the error once the webhook refuses
 * with 400 (docs/forwarding.md, docs/dashboard.md).
 */
import {expect} from 'chai'
import type {Browser, Page} from 'playwright-core'
import {launchChromium} from '../support/browser.js'
import {startServe} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {ndjsonEvents, startHttpReceiver, waitFor, type HttpReceiver} from '../services/forwarding/receivers.js'

type Server = Awaited<ReturnType<typeof startServe>>

async function postEvents(url: string, names: string[]): Promise<void> {
  const response = await fetch(`${url}/v1/batch`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify(
      names.map((action_name) => ({agent_id: 'billing-bot', action_type: 'TOOL_CALL', action_name})),
    ),
  })
  expect(response.status).to.equal(201)
}

async function forwarding(url: string): Promise<any> {
  return (await (await fetch(`${url}/v1/forwarding`)).json()).destinations
}

/** The panel's text once it matches, polled for up to 10 s (the overview refreshes itself). */
async function panelText(page: Page, expected: RegExp): Promise<string> {
  let text = ''
  try {
    await waitFor(
      async () => {
        text = await page.evaluate(() => {
          const panel = document.querySelector('#forwarding-panel') as HTMLElement | null
          return panel && !panel.hidden ? (panel.querySelector('#forwarding-list')?.textContent ?? '') : ''
        })
        return expected.test(text)
      },
      'the forwarding panel',
      10_000,
    )
  } catch {
    expect.fail(`forwarding panel: expected ${String(expected)}, found ${JSON.stringify(text)}`)
  }
  return text
}

describe('dashboard forwarding panel (headless Chromium)', function () {
  this.timeout(60_000)
  let browser: Browser
  let receiver: HttpReceiver
  let server: Server | undefined
  let dataDir: string
  const pageErrors: string[] = []

  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })
  beforeEach(async () => {
    receiver = await startHttpReceiver()
    dataDir = await tempDir('atrail-dash-fwd-')
  })
  afterEach(async () => {
    await server?.stop()
    server = undefined
    await receiver.close()
    await removeDir(dataDir)
    expect(pageErrors.splice(0), 'errors in the page').to.deep.equal([])
  })

  async function openOverview(url: string): Promise<Page> {
    const context = await browser.newContext({viewport: {width: 1280, height: 800}})
    const page = await context.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text())
    })
    await page.goto(`${url}/`)
    return page
  }

  it('shows the destination, its position and lag, and the error after the webhook answers 400', async () => {
    const hook = `${receiver.url}/audit-hook`
    server = await startServe(['--data-dir', dataDir, '--forward', hook])
    await postEvents(server.url, ['refund', 'lookup', 'notify'])
    await waitFor(() => ndjsonEvents(receiver).length === 3, 'three events at the webhook')
    await waitFor(async () => (await forwarding(server!.url))[0]?.position === 3, 'position 3 stored')

    const page = await openOverview(server.url)
    const sent = await panelText(page, /default: position 3, 0 behind/)
    expect(sent).to.contain(hook)
    expect(sent).to.not.match(/Last error/)
    expect(await page.locator('#forwarding-list li').count()).to.equal(1)

    // A 4xx other than 408/429 stops the destination where it stands (docs/forwarding.md).
    receiver.answer = () => 400
    await postEvents(server.url, ['refund', 'close'])
    await waitFor(async () => (await forwarding(server!.url))[0]?.state === 'stopped', 'the destination stopped')

    const stopped = await panelText(page, /Last error/)
    expect(stopped).to.contain(hook)
    expect(stopped).to.match(/ · stopped · /)
    expect(stopped).to.match(/default: position 3, 2 behind \(\d+ s\)/)
    expect(stopped).to.match(
      /Last error at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: POST .*audit-hook: HTTP 400: refused with 400/,
    )
    expect(await page.locator('#forwarding-list p.bad').count()).to.equal(1)
    expect(ndjsonEvents(receiver)).to.have.length(3)
    await page.context().close()
  })

  it('hides the panel when serve forwards nowhere', async () => {
    server = await startServe(['--data-dir', dataDir])
    await postEvents(server.url, ['refund'])
    const page = await openOverview(server.url)
    await page.waitForFunction(() => document.querySelector('#stat-total')?.textContent === '1')
    expect(await page.isHidden('#forwarding-panel')).to.equal(true)
    expect(await page.locator('#forwarding-list li').count()).to.equal(0)
    await page.context().close()
  })
})
