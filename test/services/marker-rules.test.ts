/**
 * The marker rules of docs/verification.md 2 (step 5) in a store, as GET /v1/verify applies them:
 * an attacker with write access to events.sqlite who puts a salt back beside an erased member, or
 * "erases" a member of a service event, leaves every hash intact, and is caught as
 * commitment_mismatch all the same.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {readdir, rm} from 'node:fs/promises'
import path from 'node:path'
import {generateSigningJwk, publicJwkOf} from '../../src/core/crypto.js'
import {jwkThumbprint} from '../../src/core/jws/jwk.js'
import {openAudit} from '../../src/services/audit.js'
import {digestsHex, digestsOfHex} from '../../src/store/digests.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'

async function tamper(dataDir: string, sql: string): Promise<void> {
  for (const file of await readdir(dataDir)) if (file.startsWith('journal')) await rm(path.join(dataDir, file))
  execFileSync('sqlite3', [path.join(dataDir, 'events.sqlite'), sql])
}

/**
 * Rewrites the salts of the rows `where` selects as an attacker who knows their binary form
 * (src/store/digests.ts) would: read as hex, changed, written back as a BLOB literal.
 */
async function tamperSalts(
  dataDir: string,
  where: string,
  edit: (salts: Record<string, string>) => Record<string, string>,
): Promise<void> {
  const file = path.join(dataDir, 'events.sqlite')
  const rows = execFileSync('sqlite3', [file, `select "index", lower(hex(salts)) from events where ${where}`])
    .toString()
    .trim()
    .split('\n')
  const updates = rows.map((row) => {
    const [index, hex] = row.split('|')
    const salts = edit(digestsOfHex(hex!) ?? {})
    const stored = Object.keys(salts).length === 0 ? 'NULL' : `x'${digestsHex(salts)}'`
    return `update events set salts = ${stored} where "index" = ${index};`
  })
  await tamper(dataDir, updates.join('\n'))
}

describe('GET /v1/verify: salts and erasure markers no hash covers', function () {
  this.timeout(60_000)
  let dir: string
  let erasedId: string
  let coveringId: string

  beforeEach(async () => {
    dir = await tempDir()
    const services = await openAudit({dataDir: dir})
    const jwk = publicJwkOf(generateSigningJwk('Ed25519'))
    await services.keys.register('signer', jwkThumbprint(jwk), jwk)
    erasedId = (await services.ingest.recordOne(makeEvent({agent_id: 'bot', input: {q: 1}, metadata: {m: 1}}))).event.id
    const erased = await services.erasure.erase({ids: [erasedId], members: ['input'], reason: 'customer request'})
    expect(erased.erased_members).to.equal(1)
    // An erasure whose filter selects the key events too: it skips them (service events are never
    // erased), yet its coverage would include them.
    const covering = {filter: {since: '2000-01-01T00:00:00Z'}, members: ['metadata'], reason: 'r'}
    const skipped = await services.erasure.erase(covering)
    coveringId = skipped.erasure!.id
    expect(skipped.skipped.map((s) => s.reason)).to.include('service_event')
    expect((await services.integrity.verifyAll()).valid).to.equal(true)
    await services.close()
  })
  afterEach(async () => {
    await removeDir(dir)
  })

  async function verdict() {
    const services = await openAudit({dataDir: dir})
    try {
      return await services.integrity.verifyAll()
    } finally {
      await services.close()
    }
  }

  it('refuses a salt put back beside an erased member', async () => {
    await tamperSalts(dir, `id = '${erasedId}'`, (salts) => ({...salts, input: 'ab'.repeat(32)}))
    const result = await verdict()
    expect(result.valid).to.equal(false)
    expect(result.invalid_agents[0]).to.include({agent_id: 'bot', reason: 'commitment_mismatch'})
  })

  it('refuses a member of a service event marked erased, even by an erasure that covers it', async () => {
    const erased = JSON.stringify({metadata: coveringId})
    await tamperSalts(dir, "agent_id = 'audit-trail:keys'", ({metadata: _, ...rest}) => rest)
    await tamper(dir, `update events set metadata = null, erased = '${erased}' where agent_id = 'audit-trail:keys'`)
    const result = await verdict()
    expect(result.valid).to.equal(false)
    expect(result.invalid_agents[0]).to.include({agent_id: 'audit-trail:keys', reason: 'commitment_mismatch'})
  })
})
