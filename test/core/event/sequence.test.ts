import {expect} from 'chai'
import {computeEventHash, sequenceEvents, validateEvent, type SequenceRequest} from '../../../src/core/event/index.js'
import {KeyTimeline} from '../../../src/core/signature/index.js'
import {GENESIS_HASH, type AgentHead, type StoredEvent} from '../../../src/core/types.js'

const now = new Date('2026-11-26T12:00:00.000Z')
let generated = 0
const generateId = () => `0190a000-0000-7000-8000-${(generated++).toString(16).padStart(12, '0')}`

function request(...bodies: Record<string, unknown>[]): SequenceRequest {
  const items = bodies.map((body) =>
    validateEvent({action_type: 'TOOL_CALL', action_name: 'read', ...body}, {now, generateId}),
  )
  return {items, recordedAt: now.toISOString()}
}

const ID = '0190b000-0000-7000-8000-000000000001'

describe('sequenceEvents', () => {
  it('continues each agent from its recorded head and the log from nextIndex', () => {
    const head: AgentHead = {agent_id: 'a', last_sequence: 7, head_hash: 'ab'.repeat(32)}
    const {outcomes, recorded, heads} = sequenceEvents(
      [request({agent_id: 'a'}, {agent_id: 'b'}), request({agent_id: 'a'})],
      {
        nextIndex: 40,
        heads: new Map([['a', head]]),
        existing: new Map(),
        keys: new KeyTimeline(),
      },
    )
    expect(recorded.map((e) => [e.agent_id, e.index, e.sequence])).to.deep.equal([
      ['a', 40, 8],
      ['b', 41, 1],
      ['a', 42, 9],
    ])
    expect(recorded[0]!.prev_hash).to.equal(head.head_hash)
    expect(recorded[1]!.prev_hash).to.equal(GENESIS_HASH)
    expect(recorded[2]!.prev_hash).to.equal(recorded[0]!.hash)
    for (const event of recorded) expect(event.hash).to.equal(computeEventHash(event))
    expect(outcomes.map((o) => o.map((x) => x.status))).to.deep.equal([[201, 201], [201]])
    expect(heads.get('a')).to.deep.equal({agent_id: 'a', last_sequence: 9, head_hash: recorded[2]!.hash})
  })

  it('answers a retry of a stored id with the stored event, a different one with a conflict', () => {
    const [stored] = sequenceEvents([request({id: ID, agent_id: 'a'})], {
      nextIndex: 0,
      heads: new Map(),
      existing: new Map(),
      keys: new KeyTimeline(),
    }).recorded
    const existing = new Map<string, StoredEvent>([[ID, stored!]])
    const {outcomes, recorded} = sequenceEvents([request({id: ID, agent_id: 'a'}, {id: ID, agent_id: 'b'})], {
      nextIndex: 1,
      heads: new Map(),
      existing,
      keys: new KeyTimeline(),
    })
    expect(recorded).to.deep.equal([])
    expect(outcomes[0]![0]).to.deep.equal({status: 200, event: stored})
    expect(outcomes[0]![1]!.status).to.equal(409)
  })

  it('treats an id repeated within one call as a retry of the first', () => {
    const {outcomes, recorded} = sequenceEvents([request({id: ID, agent_id: 'a'}), request({id: ID, agent_id: 'a'})], {
      nextIndex: 0,
      heads: new Map(),
      existing: new Map(),
      keys: new KeyTimeline(),
    })
    expect(recorded).to.have.length(1)
    expect(outcomes.map((o) => o[0]!.status)).to.deep.equal([201, 200])
  })
})
