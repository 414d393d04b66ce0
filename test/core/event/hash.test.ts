import {expect} from 'chai'
import canonicalize from 'canonicalize'
import fc from 'fast-check'
import {sha256Hex} from '../../../src/core/crypto.js'
import {computeEventHash, hashedContentOf, sameSentFields} from '../../../src/core/event/hash.js'
import {MAX_JSON_DEPTH} from '../../../src/core/event/json.js'
import {validateEvent} from '../../../src/core/event/validate.js'
import type {HashedContent, StoredEvent} from '../../../src/core/types.js'
import {hashedContent} from './arbitraries.js'

const KNOWN: HashedContent = {
  id: '0190c1a2-7b3c-7d4e-8f90-0123456789ab',
  agent_id: 'agent-ü-🤖',
  action_type: 'TOOL_CALL',
  action_name: 'search "docs"\n',
  action_status: 'success',
  timestamp: '2026-11-21T22:45:00.123Z',
  labels: {z: '1', 'a.b': 'x', A: 'y'},
  input: {b: [1, 2.5, -0, 1e21, null, true], a: 'é', '€': 1, '10': 'ten', '9': 'nine'},
  duration_ms: 12.5,
  sequence: 1,
  prev_hash: '0'.repeat(64),
  recorded_at: '2026-11-21T22:45:00.456Z',
}

describe('computeEventHash (docs/verification.md 2-3)', () => {
  it('matches a known answer computed with the canonicalize package and sha256sum', () => {
    // (in the repository) node --input-type=module -e 'import canonicalize from "canonicalize";
    //   const e = {id:"0190c1a2-7b3c-7d4e-8f90-0123456789ab",agent_id:"agent-ü-🤖",action_type:"TOOL_CALL",
    //   action_name:"search \"docs\"\n",action_status:"success",timestamp:"2026-11-21T22:45:00.123Z",
    //   labels:{"z":"1","a.b":"x","A":"y"},input:{"b":[1,2.5,-0,1e21,null,true],"a":"é","€":1,"10":"ten","9":"nine"},
    //   duration_ms:12.5,sequence:1,prev_hash:"0".repeat(64),recorded_at:"2026-11-21T22:45:00.456Z"};
    //   process.stdout.write(canonicalize(e))' | sha256sum
    expect(computeEventHash(KNOWN)).to.equal('bba1307a6307f8bd2f21f1a4f443f3eb8689d6bf47bb352b0010b168befae5fb')
  })

  it('is the SHA-256 of the package canonical form for arbitrary events', () => {
    fc.assert(
      fc.property(hashedContent, (content) => {
        expect(computeEventHash(content)).to.equal(sha256Hex(canonicalize(content) as string))
      }),
      {numRuns: 200},
    )
  })

  it('hashes the deepest JSON that validation accepts (MAX_JSON_DEPTH)', () => {
    const deep = JSON.parse('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH))
    expect(computeEventHash({...KNOWN, input: deep, output: deep, metadata: deep})).to.match(/^[0-9a-f]{64}$/)
  })

  it('changes when any member changes', () => {
    const base = computeEventHash(KNOWN)
    expect(computeEventHash({...KNOWN, labels: {...KNOWN.labels, z: '2'}})).to.not.equal(base)
    expect(computeEventHash({...KNOWN, sequence: 2})).to.not.equal(base)
    expect(computeEventHash({...KNOWN, session_id: 's'})).to.not.equal(base)
  })
})

describe('hashedContentOf', () => {
  it('drops exactly hash and index', () => {
    const stored: StoredEvent = {...KNOWN, hash: 'h'.repeat(64), index: 3}
    expect(hashedContentOf(stored)).to.deep.equal(KNOWN)
    expect(computeEventHash(hashedContentOf(stored))).to.equal(computeEventHash(KNOWN))
    expect(computeEventHash(stored)).to.equal(computeEventHash(KNOWN))
  })
})

describe('sameSentFields (docs/api.md)', () => {
  const options = {now: new Date('2026-11-21T22:50:00Z'), generateId: () => 'unused'}
  // Parsed from text so that the `__proto__` key is an own member, as it is in a request body.
  const body = JSON.parse(`{
    "id": "0190C1A2-7B3C-7D4E-8F90-0123456789AB",
    "agent_id": "agent-1",
    "action_type": "TOOL_CALL",
    "action_name": "search",
    "timestamp": "2026-11-21T23:45:00.123+01:00",
    "labels": {"b": "2", "a": "1"},
    "input": {"q": [1, {"x": null}], "__proto__": "kept"}
  }`) as Record<string, unknown>
  const validated = validateEvent(body, options)
  const stored: StoredEvent = {
    ...validated.event,
    labels: {a: '1', b: '2'},
    input: JSON.parse('{"__proto__":"kept","q":[1,{"x":null}]}'),
    session_id: 'only-in-store',
    sequence: 4,
    prev_hash: 'a'.repeat(64),
    recorded_at: '2026-11-21T22:45:01.000Z',
    hash: 'b'.repeat(64),
    index: 9,
  }

  it('accepts a retry whose normalised sent fields equal the stored ones', () => {
    expect(sameSentFields(validated, stored)).to.equal(true)
  })

  it('ignores fields the client did not send, even defaulted ones', () => {
    const retry = validateEvent({...body, timestamp: undefined}, {...options, now: new Date('2030-01-01T00:00:00Z')})
    expect(sameSentFields(retry, stored)).to.equal(true)
  })

  it('refuses a retry that differs in any sent field', () => {
    const changes: Array<Record<string, unknown>> = [
      {agent_id: 'agent-2'},
      {action_name: 'other'},
      {timestamp: '2026-11-21T22:45:00.124Z'},
      {labels: {a: '1'}},
      {labels: {a: '1', b: '2', c: '3'}},
      {input: {q: [1, {x: 0}]}},
      {input: {q: [1, {x: null}]}},
      {action_status: 'failure'},
      {duration_ms: 1},
    ]
    for (const change of changes) {
      const retry = validateEvent(JSON.parse(JSON.stringify({...body, ...change})), options)
      expect(sameSentFields(retry, stored), JSON.stringify(change)).to.equal(false)
    }
  })
})
