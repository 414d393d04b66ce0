/**
 * The tampered-package corpus (docs/verification.md): genuine packages of a log with keys, signed
 * events, a signed statement and erasures, exported by the service (plain, with every `redact`
 * subset, with receipts, with every filter), each verifies; each variant of the rules, made from
 * them, of both package versions, is refused with the failure named.
 */
import {expect} from 'chai'
import {verifyPackage, type PackageFailure} from '../../../src/core/evidence/verify.js'
import {startTestApi, type TestApi, useTestApi} from '../../support/harness.js'
import {forEachStore} from '../../support/stores.js'
import {exportPackage, recordCorpusLog, type CorpusLog} from './corpus-log.js'

const MEMBERS = ['input', 'output', 'metadata', 'error'] as const
const subsets = (): string[][] =>
  Array.from({length: 15}, (_, mask) => MEMBERS.filter((_, bit) => ((mask + 1) >> bit) & 1))

const eventOf = (pkg: any, id: string) => pkg.events.find((e: any) => e.id === id)

async function failureOf(pkg: unknown): Promise<PackageFailure> {
  const verdict = await verifyPackage(pkg as never)
  expect(verdict.valid, 'the tampered package verified').to.equal(false)
  return verdict.failure!
}

describe('genuine packages verify', function () {
  this.timeout(120_000)
  forEachStore((store) => {
    const api = useTestApi({store}, 'suite')
    let log: CorpusLog
    before(async () => {
      log = await recordCorpusLog(api)
    })

    const queries = [
      '',
      'receipts=true',
      'agent_id=bot',
      'agent_id=signer',
      'session_id=s-even',
      'trace_id=t-1',
      'action_type=SIGNED_STATEMENT',
      'label.env=prod',
      'since=2000-01-01T00:00:00Z&until=2100-01-01T00:00:00Z',
      ...subsets().map((members) => `redact=${members.join(',')}`),
      'redact=input,output,metadata,error&agent_id=signer&receipts=true',
    ]
    for (const query of queries) {
      it(`GET /v1/export?${query}`, async () => {
        const verdict = await verifyPackage(await exportPackage(api, query))
        expect(verdict.failure).to.equal(undefined)
        expect(verdict.valid).to.equal(true)
      })
    }

    it('a redacted statement still shows whose key signed it, and its signature counts', async () => {
      const pkg = await exportPackage(api, 'redact=input,metadata&agent_id=signer')
      const statement = eventOf(pkg, log.statement)
      expect(statement).to.not.have.property('input')
      expect(statement).to.not.have.property('metadata')
      expect(statement.labels.kid).to.be.a('string')
      expect((await verifyPackage(pkg)).signatures_checked).to.equal(3)
    })

    it('keys is the whole chain of audit-trail:keys, whatever the selection', async () => {
      const pkg = await exportPackage(api, 'agent_id=bot')
      expect(pkg.keys.map((k: any) => k.event.action_type)).to.deep.equal([
        'KEY_REGISTERED',
        'KEY_REGISTERED',
        'KEY_REGISTERED',
        'KEY_REVOKED',
        'KEY_REGISTERED',
      ])
      expect(pkg.version).to.equal(2)
    })
  })
})

describe('the tampered-package corpus', function () {
  this.timeout(120_000)
  let api: TestApi
  let log: CorpusLog
  const packages: Record<string, any> = {}
  before(async () => {
    api = await startTestApi()
    log = await recordCorpusLog(api)
    // A version 1 package: events without payload, of an agent without keys, beside the log's key chain.
    for (let i = 0; i < 3; i++) {
      const body = {agent_id: 'plain', action_type: 'TOOL_CALL', action_name: `p${i}`, labels: {env: 'prod'}}
      await api.request('POST', '/v1/events', {body})
    }
    packages.plain = await exportPackage(api)
    packages.redacted = await exportPackage(api, 'redact=input,output,metadata,error')
    packages.session = await exportPackage(api, 'session_id=s-odd')
    packages.label = await exportPackage(api, 'label.env=prod')
    packages.signer = await exportPackage(api, 'agent_id=signer')
    packages.v1 = await exportPackage(api, 'agent_id=plain')
    packages.receipts = await exportPackage(api, 'receipts=true')
  })
  after(async () => {
    await api.close()
  })

  const tamper = (name: string, change: (pkg: any, log: CorpusLog) => void) => {
    const pkg = structuredClone(packages[name])
    change(pkg, log)
    return pkg
  }

  it('the version 1 package is one, and verifies', async () => {
    expect(packages.v1.version).to.equal(1)
    expect((await verifyPackage(packages.v1)).valid).to.equal(true)
  })

  const commitment = {check: 'event_hash', reason: 'commitment_mismatch'}
  const variants: Array<[string, string, (pkg: any, log: CorpusLog) => void, object, RegExp]> = [
    [
      'a member listed in redacted whose value is still there (a leaking redaction)',
      'redacted',
      (pkg, log) => (eventOf(pkg, log.bot[1]).input = {question: 'q1'}),
      commitment,
      /input: absent \(redacted\), found a value/,
    ],
    [
      'a member listed in redacted whose salt is still there',
      'redacted',
      (pkg, log) => (eventOf(pkg, log.bot[1]).salts = {output: 'ab'.repeat(32)}),
      commitment,
      /output: no salt \(the member is absent\), found a salt/,
    ],
    [
      'a salt put back for an erased member',
      'plain',
      (pkg, log) => (eventOf(pkg, log.bot[0]).salts.input = 'cd'.repeat(32)),
      commitment,
      /input: no salt \(the member is absent\), found a salt/,
    ],
    [
      'a value put back for an erased member',
      'plain',
      (pkg, log) => (eventOf(pkg, log.bot[0]).input = {question: 'q0'}),
      commitment,
      /input: absent \(erased by .*\), found a value/,
    ],
    [
      'a member erased with no erasure that covers it',
      'plain',
      (pkg, log) => {
        const event = eventOf(pkg, log.bot[1])
        delete event.output
        delete event.salts.output
        event.erased = {output: log.erasure}
      },
      commitment,
      /does not cover output of this event/,
    ],
    [
      'an erased member whose erasure the package does not carry',
      'plain',
      (pkg) => (pkg.erasures = []),
      commitment,
      /no such erasure event/,
    ],
    [
      'a service event in events whose member is "erased" by an erasure that does not cover it',
      'plain',
      (pkg, log) => {
        const event = pkg.events.find((e: any) => e.agent_id === 'audit-trail:keys')
        delete event.metadata
        delete event.salts.metadata
        event.erased = {metadata: log.erasure}
      },
      commitment,
      /metadata: never erased \(a service event\)/,
    ],
    [
      'a key event in keys with an "erased" member',
      'signer',
      (pkg, log) => {
        const {event} = pkg.keys[1]
        delete event.metadata
        delete event.salts.metadata
        event.erased = {metadata: log.erasure}
      },
      {check: 'keys', reason: 'commitment_mismatch'},
      /keys\[1\].*never erased \(a service event\)/,
    ],
    [
      'an erasure event in erasures with an "erased" member, named by itself',
      'plain',
      (pkg) => {
        const {event} = pkg.erasures[0]
        delete event.metadata
        delete event.salts.metadata
        event.erased = {metadata: event.id}
      },
      {check: 'erasures', reason: 'commitment_mismatch'},
      /erasures\[0\].*never erased \(a service event\)/,
    ],
    [
      'a key revocation dropped from keys of a package filtered by label',
      'label',
      (pkg) => (pkg.keys = pkg.keys.filter((k: any) => k.event.action_type !== 'KEY_REVOKED')),
      {check: 'keys', reason: 'sequence_gap'},
      /keys\[3\] .* has sequence 5 after 3: keys must be the whole chain/,
    ],
    [
      'a key revocation dropped from keys of a package filtered by session',
      'session',
      (pkg) => (pkg.keys = pkg.keys.filter((k: any) => k.event.action_type !== 'KEY_REVOKED')),
      {check: 'keys', reason: 'sequence_gap'},
      /keys\[3\] .* has sequence 5 after 3/,
    ],
    [
      'a key registration dropped from the middle of keys (a package filtered by signer)',
      'signer',
      (pkg) => pkg.keys.splice(1, 1),
      {check: 'keys', reason: 'sequence_gap'},
      /keys\[1\] .* has sequence 3 after 1: keys must be the whole chain of audit-trail:keys/,
    ],
    ['the first key event dropped from keys', 'signer', (pkg) => pkg.keys.shift(), {check: 'keys'}, /keys\[0\]/],
    [
      'a key revocation dropped from keys of a version 1 package',
      'v1',
      (pkg) => pkg.keys.splice(3, 1),
      {check: 'keys', reason: 'sequence_gap'},
      /keys\[3\] .* has sequence 5 after 3/,
    ],
    [
      'an erased marker on an event of a version 1 package',
      'v1',
      (pkg, log) => (pkg.events[0].erased = {input: log.erasure}),
      {check: 'format'},
      /needs package version 2/,
    ],
    [
      'a redacted marker on a member never committed',
      'v1',
      (pkg) => {
        pkg.version = 2
        pkg.events[0].redacted = ['input']
      },
      commitment,
      /input: a committed member, found redacted, but never committed/,
    ],
    [
      'a payload member with no commitment',
      'plain',
      (pkg, log) => (eventOf(pkg, log.bot[0]).error = 'added'),
      commitment,
      /error: no value \(not committed\)/,
    ],
    [
      'a statement whose kid label names another key',
      'signer',
      (pkg, log) => (eventOf(pkg, log.statement).labels.kid = pkg.keys[0].event.labels.kid),
      {check: 'event_hash', reason: 'hash_mismatch'},
      /does not match its hash/,
    ],
    [
      'a receipt missing',
      'receipts',
      (pkg) => delete pkg.receipts[pkg.events[0].id],
      {check: 'receipt'},
      /has \d+ receipts for \d+ events: event .* has none \(a missing receipt\)/,
    ],
    [
      'a receipt of another event in place of one',
      'receipts',
      (pkg) => (pkg.receipts[pkg.events[0].id] = pkg.receipts[pkg.events[1].id]),
      {check: 'receipt'},
      /is for leaf 1 of \d+, not leaf 0/,
    ],
    [
      'an extra receipt for an event the package does not hold',
      'receipts',
      (pkg) => (pkg.receipts['00000000-0000-4000-8000-000000000000'] = pkg.receipts[pkg.events[0].id]),
      {check: 'receipt'},
      /the receipt for 00000000-0000-4000-8000-000000000000 is for no event of it \(an extra receipt\)/,
    ],
  ]
  for (const [what, source, change, failure, message] of variants) {
    it(`refuses ${what}`, async () => {
      const found = await failureOf(tamper(source, change))
      expect(found).to.include(failure)
      expect(found.message).to.match(message)
    })
  }
})
