/**
 * The signature threads of ingest: the same verdicts as the calling thread, in order, for
 * signatures that verify and ones that do not; and a pool with no thread verifies inline.
 */
import {expect} from 'chai'
import {generateSigningJwk, publicJwkOf} from '../../src/core/crypto.js'
import {validateEvent} from '../../src/core/event/index.js'
import {isSignatureJob, SignatureChecker, signEvent, type SignatureJob} from '../../src/core/signature/index.js'
import {SignaturePool} from '../../src/threads/signature-pool.js'

const ed25519 = generateSigningJwk('Ed25519')
const p256 = generateSigningJwk('P-256')

/** 300 jobs, signed with an Ed25519 or a P-256 key; every seventh event changed after signing. */
function jobs(): SignatureJob[] {
  return Array.from({length: 300}, (_, i) => {
    const key = i % 2 ? ed25519 : p256
    const body = signEvent({agent_id: 'bot', action_type: 'TOOL_CALL', action_name: `step-${i}`, input: {i}}, key)
    const sent = i % 7 === 0 ? {...body, action_name: 'tampered'} : body
    const {event} = validateEvent(sent, {now: new Date(), generateId: () => 'unused'})
    const prepared = new SignatureChecker(() => publicJwkOf(key)).prepare(event)
    expect(isSignatureJob(prepared)).to.equal(true)
    return prepared as SignatureJob
  })
}

describe('the signature threads of ingest', function () {
  this.timeout(60_000)

  it('give the verdicts the calling thread gives, in order, also for signatures that do not verify', async () => {
    const all = jobs()
    const inline = new SignatureChecker(() => undefined)
    const expected = all.map((job) => inline.run(job))
    expect(expected.filter((verdict) => verdict.fault !== undefined)).to.have.length(43)
    const pool = new SignaturePool(2)
    expect(await pool.run(all)).to.deep.equal(expected)
    expect(await pool.run(all.slice(0, 1))).to.deep.equal(expected.slice(0, 1))
    expect(await pool.run([])).to.deep.equal([])
  })

  it('without threads, verifies on the calling thread', async () => {
    const all = jobs().slice(0, 20)
    const inline = new SignatureChecker(() => undefined)
    expect(await new SignaturePool(0).run(all)).to.deep.equal(all.map((job) => inline.run(job)))
  })
})
