/**
 * The key file's `approve` scope and `name=` binding (docs/security.md), and the label recorded as
 * `requested_by` of an erasure asked with a named key.
 */
import {expect} from 'chai'
import {KeyFileError, parseKeyFile} from '../../../src/core/auth/keys.js'
import {makeEvent, startTestApi} from '../../support/harness.js'

const KEY = 'approver-key-0123456789abcdef'

describe('the key file: approve and name=', () => {
  it('reads the approve scope and a name after the scopes, or alone', () => {
    const [named, plain, defaults] = parseKeyFile(
      `${KEY} read, approve name=alice.smith # on call\n${KEY}2\n${KEY}3 name=ci-bot\n`,
    )
    expect([...named!.scopes]).to.deep.equal(['read', 'approve'])
    expect(named!.name).to.equal('alice.smith')
    expect(plain!.name).to.equal(undefined)
    expect([...defaults!.scopes]).to.deep.equal(['read', 'write'])
    expect(defaults!.name).to.equal('ci-bot')
  })

  it('reads trail= and agent= bindings, each a comma-separated list', () => {
    const [bound, open] = parseKeyFile(`${KEY} read,write trail=payments,ops agent=billing-*,ci name=team\n${KEY}2\n`)
    expect(bound!.trails).to.deep.equal(['payments', 'ops'])
    expect(bound!.agents).to.deep.equal(['billing-*', 'ci'])
    expect(bound!.name).to.equal('team')
    expect(open!.trails).to.equal(undefined)
    expect(open!.agents).to.equal(undefined)
  })

  it('stops at an unknown binding, naming the line, and at a bad or repeated name', () => {
    const cases: Array<[string, RegExp]> = [
      [`${KEY} read tenant=billing`, /keys\.txt, line 2: unknown binding 'tenant=billing'/],
      [`${KEY} read trail=Billing`, /line 2: trail= takes trail names .*'Billing'/],
      [`${KEY} read trail=a,,b`, /line 2: trail= takes trail names .*''/],
      [`${KEY} read agent=a,,b`, /line 2: agent= takes agent ids or patterns/],
      [`${KEY} read agent=a agent=b`, /line 2: agent= is given twice/],
      [`${KEY} read name=alice bob`, /line 2: unknown binding 'bob'/],
      [`${KEY} read name=`, /line 2: name= takes a label/],
      [`${KEY} read name=a name=b`, /line 2: name= is given twice/],
      [`${KEY} read,approved`, /line 2: unknown scope 'approved'/],
    ]
    for (const [line, message] of cases) {
      expect(() => parseKeyFile(`# keys\n${line}\n`, 'keys.txt'), line)
        .to.throw(KeyFileError)
        .with.property('message')
        .that.matches(message)
    }
  })

  it("records the key's name as requested_by of an erasure, and refuses another name", async () => {
    const api = await startTestApi({app: {apiKeys: parseKeyFile(`${KEY} read,write,erase name=dpo\n`)}})
    try {
      const headers = {authorization: `Bearer ${KEY}`}
      const event = (await api.request('POST', '/v1/events', {body: makeEvent({input: 'x'}), headers})).body
      const other = await api.request('POST', '/v1/erasures', {
        body: {ids: [event.id], reason: 'GDPR art. 17', requested_by: 'mallory'},
        headers,
      })
      expect(other.status).to.equal(400)
      const erased = await api.request('POST', '/v1/erasures', {
        body: {ids: [event.id], reason: 'GDPR art. 17'},
        headers,
      })
      expect(erased.status, erased.text).to.equal(201)
      expect(JSON.stringify(erased.body.erasure)).to.contain('"requested_by":"dpo"')
    } finally {
      await api.close()
    }
  })
})
