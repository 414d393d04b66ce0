import {expect} from 'chai'
import fc from 'fast-check'
import {checkText, countCodePoints, hasControlCharacter, isWellFormedText} from '../../../src/core/event/text.js'

describe('event text rules', () => {
  it('counts code points like the string iterator does', () => {
    fc.assert(
      fc.property(fc.string({unit: 'binary'}), (text) => {
        expect(countCodePoints(text)).to.equal([...text].length)
      }),
    )
    expect(countCodePoints('a😀é')).to.equal(3)
    // Unpaired surrogates count one each, as the iterator counts them.
    expect(countCodePoints('\ud800\ud800\udc00\udc00')).to.equal(3)
  })

  it('finds exactly the control characters (Unicode Cc: C0, DEL and C1)', () => {
    for (let code = 0; code < 0x100; code++) {
      // The reference: Unicode's own general category, as the regexp engine knows it.
      const expected = /\p{Cc}/u.test(String.fromCharCode(code))
      expect(expected, code.toString(16)).to.equal(code < 0x20 || (code >= 0x7f && code <= 0x9f))
      expect(hasControlCharacter(`a${String.fromCharCode(code)}b`), code.toString(16)).to.equal(expected)
    }
  })

  it('detects unpaired surrogates', () => {
    expect(isWellFormedText('😀')).to.equal(true)
    for (const bad of ['\ud83d', '\ude00', 'a\ude00\ud83d', '\ud83d\ud83d'])
      expect(isWellFormedText(bad)).to.equal(false)
  })

  it('applies a rule: type, emptiness, length in code points, controls', () => {
    const rule = {max: 3, noControl: true}
    expect(checkText('abc', rule)).to.equal(undefined)
    expect(checkText('😀😀😀', rule)).to.equal(undefined)
    expect(checkText('😀😀😀😀', rule)).to.equal('must be at most 3 characters')
    expect(checkText('', rule)).to.equal('must not be empty')
    expect(checkText('', {...rule, allowEmpty: true})).to.equal(undefined)
    expect(checkText('a\tb', rule)).to.equal('must not contain control characters')
    expect(checkText('a\tb', {max: 3})).to.equal(undefined)
    expect(checkText(3, rule)).to.equal('must be a string')
  })
})
