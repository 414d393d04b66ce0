import {expect} from 'chai'
import {SignatureLedger} from '../../../src/core/signature/index.js'

describe('SignatureLedger: which events have no valid signature, as runs of sequences', () => {
  it('answers each sequence with the reason of its run, and undefined for signed ones', () => {
    const ledger = new SignatureLedger()
    for (let sequence = 1; sequence <= 1000; sequence++) ledger.add('a', sequence, 'it carries no signature')
    ledger.add('a', 1001, undefined)
    ledger.add('a', 1002, 'revoked key: k')
    ledger.add('a', 1003, 'it carries no signature')
    ledger.add('b', 1, undefined)
    expect(ledger.reasonOf('a', 1)).to.equal('it carries no signature')
    expect(ledger.reasonOf('a', 1000)).to.equal('it carries no signature')
    expect(ledger.reasonOf('a', 1001)).to.equal(undefined)
    expect(ledger.reasonOf('a', 1002)).to.equal('revoked key: k')
    expect(ledger.reasonOf('a', 1003)).to.equal('it carries no signature')
    expect(ledger.reasonOf('a', 1004)).to.equal(undefined)
    expect(ledger.reasonOf('b', 1)).to.equal(undefined)
    expect(ledger.reasonOf('c', 1)).to.equal(undefined)
  })
})
