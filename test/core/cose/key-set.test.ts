import {createHash} from 'node:crypto'
import {expect} from 'chai'
import {
  coseKeyThumbprint,
  decodeKeySet,
  decodeProblem,
  encodeKeySet,
  encodeProblem,
} from '../../../src/core/cose/index.js'

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex')
/** RFC 8032 section 7.1 test 1's public key. */
const X = hex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a')

describe('COSE keys and concise problem details', () => {
  it('takes the RFC 9679 thumbprint over kty, crv and x in deterministic CBOR', () => {
    // {1: 1, -1: 6, -2: h'd75a...'}: keys 0x01 < 0x20 < 0x21 (RFC 8949 4.2.1).
    const expected = createHash('sha256')
      .update(Buffer.concat([hex('a3 01 01 20 06 21 58 20'), X]))
      .digest('hex')
    expect(coseKeyThumbprint(X).toString('hex')).to.equal(expected)
    expect(() => coseKeyThumbprint(X.subarray(1))).to.throw(RangeError)
  })

  it('encodes the key set of RFC 9052 section 7 byte for byte and reads it back', () => {
    const kid = coseKeyThumbprint(X)
    // [{1: 1, 2: kid, 3: -8, -1: 6, -2: x}]
    const expected = Buffer.concat([hex('81 a5 01 01 02 58 20'), kid, hex('03 27 20 06 21 58 20'), X])
    const set = Buffer.from(encodeKeySet([X]))
    expect(set.toString('hex')).to.equal(expected.toString('hex'))
    const [key] = decodeKeySet(set)
    expect(Buffer.from(key!.publicKey)).to.deep.equal(X)
    expect(Buffer.from(key!.kid!)).to.deep.equal(kid)
  })

  it('writes problem details as RFC 9290 section 2 does', () => {
    const body = Buffer.from(encodeProblem({title: 'Not Found', detail: 'no such entry'}))
    // {-1: "Not Found", -2: "no such entry"}
    const expected = Buffer.concat([
      hex('a2 20 69'),
      Buffer.from('Not Found'),
      hex('21 6d'),
      Buffer.from('no such entry'),
    ])
    expect(body.toString('hex')).to.equal(expected.toString('hex'))
    expect(decodeProblem(body)).to.deep.equal({title: 'Not Found', detail: 'no such entry'})
  })
})
