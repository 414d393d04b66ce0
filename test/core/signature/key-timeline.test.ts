import {expect} from 'chai'
import {generateSigningJwk, publicJwkOf} from '../../../src/core/crypto.js'
import {jwkThumbprint} from '../../../src/core/jws/jwk.js'
import {keyEventConflict, keyEventFacts, KeyTimeline} from '../../../src/core/signature/index.js'
import {registration, revocation, stored} from './support.js'

const k1 = publicJwkOf(generateSigningJwk('Ed25519'))
const k2 = publicJwkOf(generateSigningJwk('P-256'))
const kid1 = jwkThumbprint(k1)
const kid2 = jwkThumbprint(k2)

describe('KeyTimeline: which keys an agent had at each index of the log', () => {
  it('a key signs the events after its registration and before its revocation', () => {
    const keys = new KeyTimeline()
    keys.apply(registration('bot', k1, 3))
    keys.apply(registration('bot', k2, 5))
    keys.apply(revocation('bot', k1, 8))
    expect(keys.keyedBefore('bot', 3)).to.equal(false)
    expect(keys.keyedBefore('bot', 4)).to.equal(true)
    expect(keys.owner(kid1)).to.include({agentId: 'bot', registeredIndex: 3, revokedIndex: 8})
    expect(keys.owner(kid2)).to.include({agentId: 'bot', registeredIndex: 5})
    expect(keys.owner(kid2)!.revokedIndex).to.equal(undefined)
    expect(keys.keysOf('bot').map((key) => key.kid)).to.deep.equal([kid1, kid2])
    expect(keys.jwks()).to.deep.equal(
      new Map([
        [kid1, k1],
        [kid2, k2],
      ]),
    )
    expect(keys.nextIndex).to.equal(9)
  })

  it('a kid names one key of one agent for good: later registrations and stray revocations change nothing', () => {
    const keys = new KeyTimeline()
    keys.apply(registration('bot', k1, 0))
    keys.apply(registration('other', k1, 1))
    keys.apply(revocation('other', k1, 2))
    keys.apply(revocation('bot', k2, 3))
    keys.apply(revocation('bot', k1, 4))
    keys.apply(revocation('bot', k1, 5))
    keys.apply(registration('bot', k1, 6))
    expect(keys.owner(kid1)).to.include({agentId: 'bot', registeredIndex: 0, revokedIndex: 4})
    expect(keys.keysOf('other')).to.deep.equal([])
    expect(keys.owner(kid2)).to.equal(undefined)
  })

  it('sequencing refuses the key events the timeline would ignore', () => {
    const keys = new KeyTimeline()
    expect(keyEventConflict(registration('bot', k1, 0), keys)).to.equal(undefined)
    keys.apply(registration('bot', k1, 0))
    expect(keyEventConflict(registration('bot', k1, 1), keys)).to.match(/registered for agent bot already/)
    expect(keyEventConflict(registration('other', k1, 1), keys)).to.match(/registered for agent bot$/)
    expect(keyEventConflict(revocation('other', k1, 1), keys)).to.match(/agent other has no key/)
    expect(keyEventConflict(revocation('bot', k2, 1), keys)).to.match(/agent bot has no key/)
    expect(keyEventConflict(revocation('bot', k1, 1), keys)).to.equal(undefined)
    keys.apply(revocation('bot', k1, 1))
    expect(keyEventConflict(revocation('bot', k1, 2), keys)).to.match(/revoked at index 1 already/)
    expect(keyEventConflict(registration('bot', k1, 2), keys)).to.match(/was revoked at index 1/)
  })

  it('reads agent and kid from the labels, which outlive an erased metadata member', () => {
    const event = registration('bot', k1, 0)
    const {metadata: _erased, ...withoutMetadata} = event
    expect(keyEventFacts(withoutMetadata)).to.deep.equal({kind: 'KEY_REGISTERED', agentId: 'bot', kid: kid1, jwk: k1})
    const keys = new KeyTimeline()
    keys.apply({...withoutMetadata, labels: {agent_id: 'bot', kid: kid1}})
    expect(keys.owner(kid1)).to.include({agentId: 'bot', jwk: undefined})
  })

  it('takes no JWK whose thumbprint is not the kid', () => {
    const event = registration('bot', k1, 0)
    const forged = {
      ...event,
      labels: {...event.labels, jwk: JSON.stringify(k2)},
      metadata: {agent_id: 'bot', kid: kid1, jwk: k2},
    }
    expect(keyEventFacts(forged)!.jwk).to.equal(undefined)
  })

  it('ignores events of other agents and a fork goes on alone', () => {
    const keys = new KeyTimeline()
    keys.apply(
      stored({agent_id: 'bot', action_type: 'KEY_REGISTERED', action_name: 'x', labels: {agent_id: 'a', kid: kid1}}, 0),
    )
    expect(keys.owner(kid1)).to.equal(undefined)
    keys.apply(registration('bot', k1, 1))
    const fork = keys.fork()
    fork.apply(revocation('bot', k1, 2))
    expect(fork.owner(kid1)!.revokedIndex).to.equal(2)
    expect(keys.owner(kid1)!.revokedIndex).to.equal(undefined)
  })
})
