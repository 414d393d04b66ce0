/**
 * Debian's Chromium (/usr/bin/chromium, which `.ci/run` installs) in headless mode through
 * playwright-core, for the dashboard's browser tests. Without it they fail, naming the package,
 * rather than skip: a skipped browser test would hide a broken page.
 */
import {existsSync} from 'node:fs'
import {chromium, type Browser} from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium)`)
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      ...['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run'],
      ...['--disable-background-networking', '--disable-component-update', '--disable-sync'],
    ],
  })
}
