import {expect} from 'chai'
import fc from 'fast-check'
import {ChainVerifier, verifyChain, type AllChainsResult, type ChainInvalid} from '../../../src/core/chain/verify.js'
import {GENESIS_HASH, type StoredEvent} from '../../../src/core/types.js'
import {buildLog, referenceHash, rehash} from './fixtures.js'

function summaryOf(events: readonly StoredEvent[]): AllChainsResult {
  const verifier = new ChainVerifier()
  for (const event of events) verifier.add(event)
  return verifier.summary()
}

/**
 * A deliberately naive reference: group by agent, then walk each chain with the rules of
 * docs/verification.md 2-3 in the documented order (sequence, genesis/link, hash).
 */
function naiveSummary(events: readonly StoredEvent[]): AllChainsResult {
  const agents = [...new Set(events.map((e) => e.agent_id))].sort()
  const invalid: ChainInvalid[] = []
  let checked = 0
  for (const agent of agents) {
    const chain = events.filter((e) => e.agent_id === agent)
    for (let i = 0; i < chain.length; i++) {
      const event = chain[i]
      const fail = (reason: ChainInvalid['reason'], expected: string, actual: string): ChainInvalid => ({
        valid: false,
        agent_id: agent,
        events_checked: i + 1,
        first_invalid_sequence: event.sequence,
        first_invalid_event_id: event.id,
        reason,
        expected,
        actual,
      })
      let failure: ChainInvalid | undefined
      if (event.sequence !== i + 1) failure = fail('sequence_gap', String(i + 1), String(event.sequence))
      else if (i === 0 && event.prev_hash !== GENESIS_HASH) failure = fail('bad_genesis', GENESIS_HASH, event.prev_hash)
      else if (i > 0 && event.prev_hash !== chain[i - 1].hash)
        failure = fail('broken_link', chain[i - 1].hash, event.prev_hash)
      else if (referenceHash(event) !== event.hash) failure = fail('hash_mismatch', referenceHash(event), event.hash)
      if (failure) {
        invalid.push(failure)
        checked += i + 1
        break
      }
      if (i === chain.length - 1) checked += chain.length
    }
  }
  return {valid: invalid.length === 0, agents_checked: agents.length, events_checked: checked, invalid_agents: invalid}
}

const AGENTS = ['alice', 'bob', 'carol']
const log = fc.array(fc.constantFrom(...AGENTS), {minLength: 1, maxLength: 25}).map(buildLog)

/** The members a single mutation can touch, each with a way to change its value. */
const EDITS: Record<string, (event: StoredEvent) => StoredEvent> = {
  id: (e) => ({...e, id: e.id.replace(/.$/, (c) => (c === '0' ? '1' : '0'))}),
  agent_id: (e) => ({...e, agent_id: e.agent_id === 'alice' ? 'bob' : 'mallory'}),
  action_type: (e) => ({...e, action_type: 'DECISION'}),
  action_name: (e) => ({...e, action_name: `${e.action_name}!`}),
  action_status: (e) => ({...e, action_status: e.action_status === 'success' ? 'denied' : 'success'}),
  timestamp: (e) => ({...e, timestamp: '1999-01-01T00:00:00.000Z'}),
  labels: (e) => ({...e, labels: {...e.labels, injected: 'yes'}}),
  input: (e) => ({...e, input: {n: -1}}),
  input_removed: ({input: _input, ...e}) => e,
  session_id_added: (e) => ({...e, session_id: 's'}),
  duration_ms_added: (e) => ({...e, duration_ms: 0}),
  sequence: (e) => ({...e, sequence: e.sequence + 1}),
  prev_hash: (e) => ({...e, prev_hash: 'f'.repeat(64)}),
  recorded_at: (e) => ({...e, recorded_at: '2030-01-01T00:00:00.000Z'}),
  hash: (e) => ({...e, hash: referenceHash({...e, action_name: 'other'})}),
}

describe('ChainVerifier (docs/verification.md 2-3, GET /v1/verify)', () => {
  const events = buildLog(['alice', 'bob', 'alice', 'alice', 'bob', 'alice'])
  const alice = events.filter((e) => e.agent_id === 'alice')

  it('accepts a valid log of interleaved agents', () => {
    expect(verifyChain('alice', events)).to.deep.equal({
      valid: true,
      agent_id: 'alice',
      events_checked: 4,
      head_sequence: 4,
      head_hash: alice[3].hash,
    })
    expect(summaryOf(events)).to.deep.equal({valid: true, agents_checked: 2, events_checked: 6, invalid_agents: []})
  })

  it('treats an agent without events as an empty valid chain', () => {
    expect(verifyChain('nobody', events)).to.deep.equal({
      valid: true,
      agent_id: 'nobody',
      events_checked: 0,
      head_sequence: 0,
      head_hash: GENESIS_HASH,
    })
    expect(new ChainVerifier().result('nobody')).to.equal(undefined)
  })

  it('edited content: hash_mismatch on that event (expected = recomputed, actual = stored)', () => {
    const edited = {...alice[1], action_name: 'rm -rf /'}
    expect(verifyChain('alice', [alice[0], edited, alice[2], alice[3]])).to.deep.equal({
      valid: false,
      agent_id: 'alice',
      events_checked: 2,
      first_invalid_sequence: 2,
      first_invalid_event_id: alice[1].id,
      reason: 'hash_mismatch',
      expected: referenceHash(edited),
      actual: alice[1].hash,
    })
  })

  it('edited and re-hashed content: broken_link on the next event', () => {
    const edited = rehash({...alice[1], action_name: 'rm -rf /'})
    expect(verifyChain('alice', [alice[0], edited, alice[2], alice[3]])).to.deep.include({
      valid: false,
      events_checked: 3,
      first_invalid_sequence: 3,
      first_invalid_event_id: alice[2].id,
      reason: 'broken_link',
      expected: edited.hash,
      actual: alice[1].hash,
    })
  })

  it('deleted event: sequence_gap on the next one', () => {
    expect(verifyChain('alice', [alice[0], alice[2], alice[3]])).to.deep.include({
      valid: false,
      events_checked: 2,
      first_invalid_sequence: 3,
      reason: 'sequence_gap',
      expected: '2',
      actual: '3',
    })
    expect(verifyChain('alice', alice.slice(1))).to.deep.include({
      first_invalid_sequence: 2,
      reason: 'sequence_gap',
      expected: '1',
      actual: '2',
    })
  })

  it('two events swapped: sequence_gap', () => {
    expect(verifyChain('alice', [alice[0], alice[2], alice[1], alice[3]])).to.deep.include({
      events_checked: 2,
      first_invalid_event_id: alice[2].id,
      reason: 'sequence_gap',
      expected: '2',
      actual: '3',
    })
  })

  it('changed prev_hash: broken_link (expected = previous hash, actual = prev_hash)', () => {
    const relinked = {...alice[2], prev_hash: alice[0].hash}
    expect(verifyChain('alice', [alice[0], alice[1], relinked, alice[3]])).to.deep.include({
      first_invalid_sequence: 3,
      reason: 'broken_link',
      expected: alice[1].hash,
      actual: alice[0].hash,
    })
  })

  it('wrong genesis: bad_genesis, even when the event is re-hashed', () => {
    const first = rehash({...alice[0], prev_hash: 'a'.repeat(64)})
    expect(verifyChain('alice', [first, ...alice.slice(1)])).to.deep.include({
      events_checked: 1,
      first_invalid_sequence: 1,
      reason: 'bad_genesis',
      expected: GENESIS_HASH,
      actual: 'a'.repeat(64),
    })
  })

  it('reports content that cannot be hashed as a hash_mismatch instead of throwing', () => {
    const result = verifyChain('alice', [{...alice[0], duration_ms: Number.NaN}])
    expect(result).to.deep.include({valid: false, reason: 'hash_mismatch', actual: alice[0].hash})
    expect((result as ChainInvalid).expected).to.match(/^unhashable content/)
  })

  it('stops at the first failure per agent and keeps verifying the others', () => {
    const tampered = events.map((e, i) => (i === 2 ? {...e, action_name: 'x'} : e))
    const verifier = new ChainVerifier()
    for (const event of tampered) verifier.add(event)
    expect(verifier.results().map((r) => [r.agent_id, r.valid, r.events_checked])).to.deep.equal([
      ['alice', false, 2],
      ['bob', true, 2],
    ])
    expect(verifier.summary()).to.deep.include({valid: false, agents_checked: 2, events_checked: 4})
    expect(verifier.summary().invalid_agents.map((r) => r.agent_id)).to.deep.equal(['alice'])
  })

  it('orders results by agent_id', () => {
    const verifier = new ChainVerifier()
    for (const event of buildLog(['zed', 'Ann', 'bob', 'ann'])) verifier.add(event)
    expect(verifier.results().map((r) => r.agent_id)).to.deep.equal(['Ann', 'ann', 'bob', 'zed'])
  })

  it('accepts every valid log, heads matching the last events', () => {
    fc.assert(
      fc.property(log, (valid) => {
        const summary = summaryOf(valid)
        expect(summary).to.deep.equal({
          valid: true,
          agents_checked: new Set(valid.map((e) => e.agent_id)).size,
          events_checked: valid.length,
          invalid_agents: [],
        })
        for (const agent of AGENTS) {
          const own = valid.filter((e) => e.agent_id === agent)
          if (own.length > 0)
            expect(verifyChain(agent, valid)).to.deep.include({head_sequence: own.length, head_hash: own.at(-1)!.hash})
        }
      }),
    )
  })

  it('checks each chain against the head the service recorded for it', () => {
    /** The heads of a log as the service records them (agents table). */
    const headsOf = (events: readonly StoredEvent[]) => [
      ...new Map(
        events.map((e) => [e.agent_id, {agent_id: e.agent_id, last_sequence: e.sequence, head_hash: e.hash}]),
      ).values(),
    ]
    fc.assert(
      fc.property(log, fc.nat(), fc.nat(), (valid, cut, removeCount) => {
        const verifier = new ChainVerifier(headsOf(valid))
        for (const event of valid) verifier.add(event)
        expect(verifier.summary().valid).to.equal(true)
        // Heads recorded at an earlier moment, with more events than they cover: events the service
        // never recorded (added outside it), each agent failing at the first of them.
        const earlier = valid.slice(0, cut % (valid.length + 1))
        const grown = new ChainVerifier(headsOf(earlier))
        for (const event of valid) grown.add(event)
        const expected = [...new Set(valid.slice(earlier.length).map((e) => e.agent_id))].sort().map((agentId) => {
          const own = valid.filter((e) => e.agent_id === agentId)
          const recorded = earlier.filter((e) => e.agent_id === agentId).length
          return {
            valid: false,
            agent_id: agentId,
            events_checked: own.length,
            first_invalid_sequence: recorded + 1,
            first_invalid_event_id: own[recorded]!.id,
            reason: 'sequence_gap',
            expected: String(recorded),
            actual: String(own.length),
          }
        })
        expect(grown.summary().invalid_agents).to.deep.equal(expected)
        // An agent's newest events removed: short of its recorded head, the first missing named.
        const agent = valid[cut % valid.length]!.agent_id
        const own = valid.filter((e) => e.agent_id === agent)
        const removed = 1 + (removeCount % own.length)
        const kept = valid.filter((e) => !own.slice(own.length - removed).includes(e))
        const shorter = new ChainVerifier(headsOf(valid))
        for (const event of kept) shorter.add(event)
        expect(shorter.summary().invalid_agents).to.deep.equal([
          {
            valid: false,
            agent_id: agent,
            events_checked: own.length - removed,
            first_invalid_sequence: own.length - removed + 1,
            first_invalid_event_id: null,
            reason: 'sequence_gap',
            expected: String(own.length),
            actual: String(own.length - removed),
          },
        ])
        // The newest event rewritten and re-hashed: the chain links, the recorded hash does not match.
        const last = own.at(-1)!
        const forged = rehash({...last, action_name: 'forged'})
        const rewritten = new ChainVerifier(headsOf(valid))
        for (const event of valid) rewritten.add(event === last ? forged : event)
        expect(rewritten.result(agent)).to.deep.equal({
          valid: false,
          agent_id: agent,
          events_checked: own.length,
          first_invalid_sequence: own.length,
          first_invalid_event_id: last.id,
          reason: 'hash_mismatch',
          expected: last.hash,
          actual: forged.hash,
        })
      }),
    )
  })

  it('detects any single-field mutation of any event', () => {
    fc.assert(
      fc.property(log, fc.nat(), fc.constantFrom(...Object.keys(EDITS)), (valid, at, field) => {
        const target = at % valid.length
        const mutated = valid.map((e, i) => (i === target ? EDITS[field](e) : e))
        expect(summaryOf(mutated).valid, `${field} of event ${target}`).to.equal(false)
      }),
      {numRuns: 300},
    )
  })

  it('agrees with a naive reference on logs with deletions, swaps and edits', () => {
    const mutation = fc.oneof(
      fc.record({kind: fc.constant('delete' as const), at: fc.nat()}),
      fc.record({kind: fc.constant('swap' as const), at: fc.nat()}),
      fc.record({
        kind: fc.constant('edit' as const),
        at: fc.nat(),
        field: fc.constantFrom(...Object.keys(EDITS)),
        rehash: fc.boolean(),
      }),
    )
    fc.assert(
      fc.property(log, fc.array(mutation, {maxLength: 3}), (valid, mutations) => {
        const events = [...valid]
        for (const m of mutations) {
          if (events.length < 2) break
          const i = m.at % events.length
          if (m.kind === 'delete') events.splice(i, 1)
          else if (m.kind === 'swap')
            [events[i], events[(i + 1) % events.length]] = [events[(i + 1) % events.length], events[i]]
          else events[i] = m.rehash ? rehash(EDITS[m.field](events[i])) : EDITS[m.field](events[i])
        }
        expect(summaryOf(events)).to.deep.equal(naiveSummary(events))
        for (const agent of [...AGENTS, 'mallory']) {
          const naive = naiveSummary(events.filter((e) => e.agent_id === agent))
          const result = verifyChain(agent, events)
          expect(result.valid).to.equal(naive.valid)
          if (!result.valid) expect(result).to.deep.equal(naive.invalid_agents[0])
        }
      }),
      {numRuns: 300},
    )
  })
})
