import {expect} from 'chai'
import fc from 'fast-check'
import {eraseMembers, redactEvent} from '../../../src/core/erasure/index.js'
import {verifyPackage} from '../../../src/core/evidence/verify.js'
import type {Json, PayloadMemberName, StoredEvent} from '../../../src/core/types.js'
import {buildCommittedLog, MEMBERS, packageOf, referenceEventHash, type EventSpec} from './committed-log.js'

const value = fc.jsonValue({maxDepth: 2}) as fc.Arbitrary<Json>
const payload = fc.record(
  {input: value, output: value, metadata: value, error: fc.string({maxLength: 12})},
  {requiredKeys: []},
) as fc.Arbitrary<Partial<Record<PayloadMemberName, Json>>>
const memberSet = fc.subarray([...MEMBERS])
const spec = fc.record({agent: fc.constantFrom('a', 'b', 'c'), payload}) as fc.Arbitrary<EventSpec>

/** A log, an erasure event at its end naming what it erased, and members withheld from the package. */
const scenario = fc.array(fc.tuple(spec, memberSet, memberSet), {minLength: 1, maxLength: 8}).map((rows) => {
  const specs = rows.map(([s]) => s)
  const log = buildCommittedLog(specs)
  const ids: Record<string, PayloadMemberName[]> = {}
  rows.forEach(([, erase], i) => {
    const held = erase.filter((m) => log[i]![m] !== undefined)
    if (held.length > 0) ids[log[i]!.id] = held
  })
  const metadata = {reason: 'property test', members: [...MEMBERS], ids} as unknown as Json
  const [erasure] = buildCommittedLog([...specs, {agent: 'audit-trail:erasures', payload: {metadata}}]).slice(-1)
  const events = [
    ...log.map((e, i) => redactEvent(eraseMembers(e, ids[e.id] ?? [], erasure!.id), rows[i]![2])),
    erasure!,
  ]
  return {original: [...log, erasure!], events, erasure: erasure!}
})

describe('core/erasure: erased and redacted members keep every proof (docs/verification.md 2)', () => {
  it('keeps each hash, chain and inclusion proof for random erasures and redactions (property)', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({original, events, erasure}) => {
        events.forEach((event, i) => expect(referenceEventHash(event)).to.equal(original[i]!.hash))
        const result = await verifyPackage(packageOf(events, [erasure]))
        expect(result.failure).to.equal(undefined)
        expect(result.valid).to.equal(true)
      }),
      {numRuns: 150},
    )
  })

  it('fails when any byte of a remaining value, salt or commitment changes (property)', async () => {
    const kinds = fc.constantFrom('value', 'salt', 'commitment')
    await fc.assert(
      fc.asyncProperty(scenario, kinds, fc.nat(), async ({events, erasure}, kind, pick) => {
        const candidates = events.flatMap((event, i) =>
          MEMBERS.filter((m) => event[m] !== undefined && event !== erasure).map((m) => [i, m] as const),
        )
        fc.pre(candidates.length > 0)
        const [i, member] = candidates[pick % candidates.length]!
        const changed: StoredEvent = structuredClone(events[i]!)
        const flip = (text: string) => (text[0] === '0' ? '1' : '0') + text.slice(1)
        if (kind === 'value') {
          const record = changed as unknown as Record<string, unknown>
          record[member] = member === 'error' ? `${changed.error}!` : [changed[member]]
        } else if (kind === 'salt') changed.salts![member] = flip(changed.salts![member]!)
        else changed.commitments![member] = flip(changed.commitments![member]!)
        const tampered = events.map((event, j) => (j === i ? changed : event))
        const result = await verifyPackage(packageOf(tampered, [erasure]))
        expect(result.valid).to.equal(false)
        expect(result.failure?.check).to.equal('event_hash')
      }),
      {numRuns: 150},
    )
  })

  describe('an erased member must name an erasure that covers it', () => {
    const log = buildCommittedLog([
      {agent: 'a', payload: {input: {q: 'secret'}, output: 'answer'}},
      {agent: 'a', payload: {input: 'other'}},
    ])
    const metadata = {reason: 'test', members: ['input'], ids: {[log[0]!.id]: ['input']}} as unknown as Json
    const [erasure] = buildCommittedLog([
      {agent: 'a', payload: {}},
      {agent: 'a', payload: {}},
      {agent: 'audit-trail:erasures', payload: {metadata}},
    ]).slice(-1)
    const erased = (event: StoredEvent, member: PayloadMemberName) => eraseMembers(event, [member], erasure!.id)

    it('verifies when it does', async () => {
      const result = await verifyPackage(packageOf([erased(log[0]!, 'input'), log[1]!, erasure!], [erasure!]))
      expect(result.failure).to.equal(undefined)
      expect(result.erasures).to.equal(1)
    })

    it('fails with commitment_mismatch when the package lacks the erasure', async () => {
      const result = await verifyPackage(packageOf([erased(log[0]!, 'input'), log[1]!, erasure!]))
      expect(result.failure).to.include({check: 'event_hash', reason: 'commitment_mismatch'})
      expect(result.failure?.actual).to.equal('no such erasure event')
    })

    it('fails when the erasure does not cover that member or that event', async () => {
      for (const [event, member] of [
        [log[0]!, 'output'],
        [log[1]!, 'input'],
      ] as const) {
        const events = [log[0]!, log[1]!, erasure!].map((e) => (e.id === event.id ? erased(e, member) : e))
        const result = await verifyPackage(packageOf(events, [erasure!]))
        expect(result.failure).to.include({reason: 'commitment_mismatch', event_id: event.id})
      }
    })

    it('fails when an erasures entry is altered or not in the tree', async () => {
      const events = [erased(log[0]!, 'input'), log[1]!, erasure!]
      const pkg = packageOf(events, [erasure!])
      pkg.erasures![0]!.event = {...erasure!, action_name: 'payload.forged'}
      expect((await verifyPackage(pkg)).failure).to.include({check: 'erasures'})
      const other = packageOf(events, [erasure!])
      other.erasures![0]!.proof.audit_path = other.erasures![0]!.proof.audit_path.slice(1)
      expect((await verifyPackage(other)).failure).to.include({check: 'erasures'})
    })

    it('a redacted member stays verifiable, and one removed without being listed fails', async () => {
      const redacted = redactEvent(log[0]!, ['input', 'output'])
      expect(redacted.redacted).to.deep.equal(['input', 'output'])
      expect(redacted).to.not.have.any.keys('input', 'output', 'salts')
      expect((await verifyPackage(packageOf([redacted, log[1]!, erasure!]))).valid).to.equal(true)
      const {redacted: _listed, ...unlisted} = redacted
      const result = await verifyPackage(packageOf([unlisted as StoredEvent, log[1]!, erasure!]))
      expect(result.failure).to.include({reason: 'commitment_mismatch'})
    })
  })
})
