import {expect} from 'chai'
import canonicalize from 'canonicalize'
import {execFileSync} from 'node:child_process'
import fc from 'fast-check'
import {recomputeHash} from '../../../src/core/chain/index.js'
import {
  commitmentFault,
  commitmentOf,
  computeEventHash,
  PAYLOAD_MEMBERS,
  validateEvent,
} from '../../../src/core/event/index.js'
import type {HashedContent, PayloadMemberName, StoredEvent} from '../../../src/core/types.js'
import {hex64, jsonValue} from './arbitraries.js'

/** sha256sum(1) of bytes: an outside tool for the known answers. */
const sha256sum = (bytes: Buffer): string => execFileSync('sha256sum', {input: bytes}).toString().slice(0, 64)

// The worked example of docs/verification.md 2.
const SALTS = {
  input: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
  error: 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100',
}
const EXAMPLE = {
  id: '0190c1a2-7b3c-7d4e-8f90-0123456789ab',
  agent_id: 'support-bot',
  action_type: 'TOOL_CALL',
  action_name: 'crm.lookup',
  timestamp: '2026-11-28T10:00:00Z',
  labels: {env: 'prod'},
  input: {customer: 'Zoë Example', query: 'refund'},
  error: 'timeout',
  salts: SALTS,
}
const SERVICE = {sequence: 1, prev_hash: '0'.repeat(64), recorded_at: '2026-11-28T10:00:00.250Z'}

function exampleEvent(): HashedContent {
  const {event} = validateEvent(EXAMPLE, {now: new Date(), generateId: () => 'unused'})
  return {...event, ...SERVICE}
}

describe('payload commitments (docs/verification.md 2)', () => {
  it('computes the worked example as the canonicalize package and sha256sum do', () => {
    const event = exampleEvent()
    // Independently: JCS by the canonicalize package, the salt's bytes then the JCS bytes, sha256sum.
    const input = sha256sum(Buffer.concat([Buffer.from(SALTS.input, 'hex'), Buffer.from(canonicalize(EXAMPLE.input)!)]))
    const error = sha256sum(Buffer.concat([Buffer.from(SALTS.error, 'hex'), Buffer.from(canonicalize(EXAMPLE.error)!)]))
    expect(event.commitments).to.deep.equal({input, error})
    const {input: _i, error: _e, salts: _s, ...hashedForm} = event
    const hash = sha256sum(Buffer.from(canonicalize(hashedForm)!))
    expect(computeEventHash(event)).to.equal(hash)
  })

  it('gives the known answers written in docs/verification.md', () => {
    const event = exampleEvent()
    expect(event.commitments).to.deep.equal(KNOWN_COMMITMENTS)
    expect(computeEventHash(event)).to.equal(KNOWN_HASH)
  })

  it('draws a 32-byte salt per member when the client sends none, and none without payload', () => {
    const {event} = validateEvent(
      {agent_id: 'a', action_type: 'X', action_name: 'n', output: 1, metadata: null},
      {
        now: new Date(),
        generateId: () => '0190c1a2-7b3c-7d4e-8f90-0123456789ab',
      },
    )
    expect(Object.keys(event.salts!)).to.deep.equal(['output', 'metadata'])
    for (const salt of Object.values(event.salts!)) expect(salt).to.match(/^[0-9a-f]{64}$/)
    expect(event.salts!.output).to.not.equal(event.salts!.metadata)
    expect(event.commitments!.output).to.equal(commitmentOf(event.salts!.output!, 1))
    const bare = validateEvent(
      {agent_id: 'a', action_type: 'X', action_name: 'n'},
      {now: new Date(), generateId: () => 'x'},
    )
    expect(bare.event).to.not.have.any.keys('salts', 'commitments')
  })

  it('refuses salts that do not cover exactly the payload members sent', () => {
    const base = {agent_id: 'a', action_type: 'X', action_name: 'n'}
    const options = {now: new Date(), generateId: () => 'x'}
    const refusal = (body: object) => {
      try {
        validateEvent(body, options)
      } catch (error) {
        return (error as {details: {field: string}[]}).details.map((d) => d.field)
      }
      throw new Error('accepted')
    }
    expect(refusal({...base, input: 1, salts: {}})).to.deep.equal(['salts.input'])
    expect(refusal({...base, salts: {input: SALTS.input}})).to.deep.equal(['salts.input'])
    expect(refusal({...base, input: 1, salts: {input: SALTS.input.toUpperCase()}})).to.deep.equal(['salts'])
    expect(refusal({...base, input: 1, salts: {input: SALTS.input, labels: SALTS.input}})).to.deep.equal(['salts'])
    expect(refusal({...base, input: 1, salts: 'x'})).to.deep.equal(['salts'])
    expect(refusal({...base, commitments: {}})).to.deep.equal(['commitments'])
    expect(refusal({...base, erased: {}})).to.deep.equal(['erased'])
  })

  const member = fc.constantFrom<PayloadMemberName>(...PAYLOAD_MEMBERS)
  const payload = fc.record(
    {
      input: jsonValue,
      output: jsonValue,
      metadata: jsonValue,
      error: fc.string(),
      salts: fc.record({input: hex64, output: hex64, metadata: hex64, error: hex64}),
    },
    {requiredKeys: ['salts']},
  )

  function stored(fields: {[key: string]: unknown}): StoredEvent {
    const salts = Object.fromEntries(
      PAYLOAD_MEMBERS.filter((m) => fields[m] !== undefined).map((m) => [
        m,
        (fields.salts as Record<string, string>)[m],
      ]),
    )
    const body = {agent_id: 'a', action_type: 'X', action_name: 'n', ...fields, salts}
    const {event} = validateEvent(body, {now: new Date(), generateId: () => '0190c1a2-7b3c-7d4e-8f90-0123456789ab'})
    const content = {...event, ...SERVICE}
    return {...content, hash: computeEventHash(content), index: 0}
  }

  it('keeps the hash and every commitment valid when any members are erased or redacted', () => {
    fc.assert(
      fc.property(payload, fc.subarray([...PAYLOAD_MEMBERS]), fc.boolean(), (fields, gone, redact) => {
        const event = stored(fields)
        const after: StoredEvent = structuredClone(event)
        for (const m of gone) {
          if (after[m] === undefined) continue
          delete after[m]
          delete after.salts![m]
          if (redact) after.redacted = [...(after.redacted ?? []), m]
          else after.erased = {...after.erased, [m]: '0190c1a2-0000-7000-8000-000000000000'}
        }
        expect(recomputeHash(after)).to.equal(event.hash)
        expect(commitmentFault(after)).to.equal(undefined)
      }),
      {numRuns: 200},
    )
  })

  it('fails when a remaining value, salt or commitment changes', () => {
    fc.assert(
      fc.property(
        payload,
        member,
        fc.constantFrom('value', 'salt', 'commitment', 'absent', 'added'),
        (fields, m, what) => {
          const event = stored(fields)
          const changed: StoredEvent = structuredClone(event)
          if (what === 'value') {
            if (changed[m] === undefined) return
            ;(changed as unknown as Record<string, unknown>)[m] = m === 'error' ? `${changed.error}!` : [changed[m]]
          } else if (what === 'salt') {
            if (changed.salts?.[m] === undefined) return
            const salt = changed.salts[m]!
            changed.salts[m] = (salt[0] === '0' ? '1' : '0') + salt.slice(1)
          } else if (what === 'commitment') {
            if (changed.commitments?.[m] === undefined) return
            const c = changed.commitments[m]!
            changed.commitments[m] = (c[0] === '0' ? '1' : '0') + c.slice(1)
          } else if (what === 'absent') {
            if (changed[m] === undefined) return
            delete changed[m]
          } else {
            if (changed[m] !== undefined || changed.commitments === undefined) return
            ;(changed as unknown as Record<string, unknown>)[m] = 'smuggled'
          }
          const verdict = recomputeHash(changed)
          expect(verdict === event.hash && commitmentFault(changed) === undefined).to.equal(false)
        },
      ),
      {numRuns: 300},
    )
  })

  it('hashes an event without commitments (hash version 1) with its payload, as before', () => {
    const v1: HashedContent = {
      id: '0190c1a2-7b3c-7d4e-8f90-0123456789ab',
      agent_id: 'a',
      action_type: 'X',
      action_name: 'n',
      action_status: 'success',
      timestamp: '2026-11-28T10:00:00.000Z',
      labels: {},
      input: {secret: 1},
      ...SERVICE,
    }
    expect(computeEventHash(v1)).to.equal(sha256sum(Buffer.from(canonicalize(v1)!)))
    expect(commitmentFault({...v1, hash: computeEventHash(v1), index: 0})).to.equal(undefined)
  })
})

const KNOWN_COMMITMENTS = {
  input: '1288cb9458a5d9abd9c3b4ce36180270088d0f1c7fc4d3b0c635b55a3fcc03f9',
  error: '085b7fc0df0ce4c4cbc5b353e22fc573286e046316f0a618c0013ed75f4ea88c',
}
const KNOWN_HASH = 'c64fac0104a3e7bc2750cc7ba1e0702bd4713b6a67099c21e867fd5a91d187f7'

describe('reserved agent ids (docs/api.md)', () => {
  const options = {now: new Date(), generateId: () => '0190c1a2-7b3c-7d4e-8f90-0123456789ab'}
  const body = {agent_id: 'audit-trail:erasures', action_type: 'ERASURE', action_name: 'payload.erase'}

  it('refuses a client event under the audit-trail: prefix, naming agent_id', () => {
    expect(() => validateEvent(body, options)).to.throw(/audit-trail:/)
  })

  it('lets the service record its own events there', () => {
    expect(validateEvent(body, {...options, internal: true}).event.agent_id).to.equal('audit-trail:erasures')
  })
})
