/** The binary form of salts and commitments (src/store/digests.ts). */
import {expect} from 'chai'
import {digestsHex, digestsOfHex} from '../../src/store/digests.js'

const a = 'a'.repeat(64)
const b = '0123456789abcdef'.repeat(4)

describe('salts and commitments in binary form (src/store/digests.ts)', () => {
  it('is a byte naming the members (input 1, output 2, metadata 4, error 8), then their bytes in that order', () => {
    expect(digestsHex({error: b, input: a})).to.equal(`09${a}${b}`)
    expect(digestsHex({metadata: a})).to.equal(`04${a}`)
    expect(digestsHex({})).to.equal('00')
  })

  it('reads back every member with its digest, in the members order', () => {
    const value = {input: a, output: b, metadata: b, error: a}
    expect(digestsOfHex(digestsHex(value)!)).to.deep.equal(value)
    expect(Object.keys(digestsOfHex(digestsHex({error: a, output: b})!)!)).to.deep.equal(['output', 'error'])
  })

  it('leaves values of another shape to be kept as they are', () => {
    expect(digestsHex({input: a.toUpperCase()})).to.equal(undefined)
    expect(digestsHex({input: a.slice(1)})).to.equal(undefined)
    expect(digestsHex({input: a, labels: a})).to.equal(undefined)
    expect(digestsHex({input: 1})).to.equal(undefined)
    expect(digestsHex([a])).to.equal(undefined)
    expect(digestsHex('text')).to.equal(undefined)
  })

  it('reads only a whole stored form: a mask that names as many digests as follow', () => {
    expect(digestsOfHex(`03${a}`)).to.equal(undefined)
    expect(digestsOfHex(`01${a}${b}`)).to.equal(undefined)
    expect(digestsOfHex(`10${a}`)).to.equal(undefined)
    expect(digestsOfHex(JSON.stringify({input: a}))).to.equal(undefined)
  })
})
