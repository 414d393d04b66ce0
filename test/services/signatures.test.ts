/**
 * Signatures against the store (docs/signatures.md): a revocation committed by one writer before
 * another's event wins, whoever sequences it; and an event forged straight into the store, with a
 * hash and chain that hold but no valid signature, is what `verify` reports.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {readdir, rm} from 'node:fs/promises'
import path from 'node:path'
import {generateSigningJwk, publicJwkOf} from '../../src/core/crypto.js'
import {computeEventHash} from '../../src/core/event/index.js'
import {jwkThumbprint} from '../../src/core/jws/jwk.js'
import {signEvent} from '../../src/core/signature/index.js'
import type {StoredEvent} from '../../src/core/types.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {REBUILD_AGGREGATES} from '../../src/store/sqljs/aggregates.js'
import {removeDir, tempDir} from '../support/harness.js'
import {postgresPerTest} from '../support/stores.js'

const key = generateSigningJwk('Ed25519')
const jwk = publicJwkOf(key)
const kid = jwkThumbprint(jwk)
const action = (name: string) => ({agent_id: 'bot', action_type: 'TOOL_CALL', action_name: name, output: {name}})

/** A key for `bot` and two events it signed: the second is the one the attacker forges. */
async function seed(services: AuditServices): Promise<StoredEvent> {
  await services.keys.register('bot', kid, jwk)
  await services.ingest.recordOne(signEvent(action('first'), key))
  return (await services.ingest.recordOne(signEvent(action('second'), key))).event
}

/** Forgeries with a hash recomputed as the service computes it, so that only the signature tells. */
const FORGERIES: Array<[string, (event: StoredEvent) => StoredEvent, RegExp]> = [
  [
    'the action changed under its signature',
    (event) => ({...event, action_name: 'wire.transfer'}),
    /over other content/,
  ],
  [
    'the signature removed',
    ({signature: _signature, ...event}) => event as StoredEvent,
    /^missing signature: agent bot has a key/,
  ],
]

describe('a forged event with a valid hash but no valid signature is reported by verify', function () {
  this.timeout(60_000)

  describe('a data directory edited with sqlite3 while the service is stopped', () => {
    let dir: string
    let services: AuditServices | undefined
    beforeEach(async () => {
      dir = await tempDir()
    })
    afterEach(async () => {
      await services?.close()
      services = undefined
      await removeDir(dir)
    })

    for (const [what, forge, message] of FORGERIES) {
      it(what, async () => {
        services = await openAudit({dataDir: dir})
        const genuine = await seed(services)
        await services.close()
        const forged = forge(genuine)
        const hash = computeEventHash(forged)
        // The journal could restore the row: the attacker removes it, and rewrites the heads too.
        for (const file of await readdir(dir)) if (file.startsWith('journal')) await rm(path.join(dir, file))
        const signature = forged.signature === undefined ? 'NULL' : `'${forged.signature}'`
        execFileSync('sqlite3', [
          path.join(dir, 'events.sqlite'),
          `update events set action_name = '${forged.action_name}', signature = ${signature}, hash = '${hash}'
           where id = '${genuine.id}'; ${REBUILD_AGGREGATES}`,
        ])
        services = await openAudit({dataDir: dir})
        const all = await services.integrity.verifyAll()
        expect(all.valid).to.equal(false)
        expect(all.invalid_agents).to.have.length(1)
        expect(all.invalid_agents[0]).to.include({
          agent_id: 'bot',
          first_invalid_sequence: 2,
          first_invalid_event_id: genuine.id,
          reason: 'bad_signature',
        })
        expect(all.invalid_agents[0]!.actual).to.match(message)
        const agents = await services.query.agents()
        expect(agents.find((agent) => agent.agent_id === 'bot')!.chain_valid).to.equal(false)
        expect(agents.find((agent) => agent.agent_id === 'audit-trail:keys')!.chain_valid).to.equal(true)
      })
    }
  })

  describe('a row rewritten with psql on PostgreSQL', () => {
    const fresh = postgresPerTest()

    for (const [what, forge, message] of FORGERIES) {
      it(what, async () => {
        let services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
        const genuine = await seed(services)
        await services.close()
        const forged = forge(genuine)
        const hash = computeEventHash(forged)
        const signature = forged.signature === undefined ? 'NULL' : `'${forged.signature}'`
        execFileSync('psql', [
          fresh.url,
          '-v',
          'ON_ERROR_STOP=1',
          '-c',
          `UPDATE events SET action_name = '${forged.action_name}', signature = ${signature}, hash = '${hash}'
           WHERE id = '${genuine.id}'; UPDATE agents SET head_hash = '${hash}' WHERE agent_id = 'bot'`,
        ])
        services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
        try {
          const one = await services.integrity.verifyAgent('bot')
          expect(one).to.include({valid: false, first_invalid_sequence: 2, reason: 'bad_signature'})
          expect((one as {actual: string}).actual).to.match(message)
        } finally {
          await services.close()
        }
      })
    }
  })
})

describe('two writers on PostgreSQL: a revocation committed before an event wins', function () {
  this.timeout(120_000)
  const fresh = postgresPerTest()

  it("an event signed with a key the other writer revoked is refused, checked under the log's lock", async () => {
    const admin = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const writer = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    try {
      await admin.keys.register('bot', kid, jwk)
      // The writer's process has not read the key: its signature is checked under the lock.
      expect(writer.keys.jwkOf(kid)).to.equal(undefined)
      expect((await writer.ingest.recordOne(signEvent(action('before'), key))).status).to.equal(201)
      // Events go on while the other process revokes: each is sequenced against the key state of its index.
      const sending = (async () => {
        const outcomes: Array<{index?: number; refused?: string}> = []
        for (let i = 0; i < 30; i++) {
          try {
            outcomes.push({index: (await writer.ingest.recordOne(signEvent(action(`race-${i}`), key))).event.index})
          } catch (error) {
            outcomes.push({refused: (error as Error).message})
          }
        }
        return outcomes
      })()
      await new Promise((resolve) => setTimeout(resolve, 20))
      const revocation = (await admin.keys.revoke('bot', kid)).event.index
      const outcomes = await sending
      for (const outcome of outcomes) {
        if (outcome.index !== undefined) expect(outcome.index).to.be.below(revocation)
        else expect(outcome.refused).to.match(/^revoked key: .* revoked at index/)
      }
      expect(outcomes.at(-1)!.refused).to.match(/^revoked key/)
      expect(await writer.integrity.verifyAll()).to.include({valid: true})
    } finally {
      await writer.close()
      await admin.close()
    }
  })
})
