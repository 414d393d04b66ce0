import {expect} from 'chai'
import fc from 'fast-check'
import {bigintBytes, integerBytes, toArrayBuffer, unsignedInteger} from '../../../src/core/timestamp/pkix.js'

/** Naive reference: the DER INTEGER of a non-negative bigint, per X.690 8.3 (two's complement, minimal). */
function referenceDer(value: bigint): string {
  let hex = value.toString(16)
  if (hex.length % 2) hex = `0${hex}`
  if (parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`
  return `02${(hex.length / 2).toString(16).padStart(2, '0')}${hex}`
}

function der(bytes: Uint8Array): string {
  return Buffer.from(unsignedInteger(bytes).toBER(false)).toString('hex')
}

describe('core/timestamp/pkix integers (X.690 8.3)', () => {
  it('encodes known values minimally and as positive', () => {
    // openssl asn1parse -genstr INTEGER:0x075BCD15 -noout -out /dev/stdout | xxd -p  ->  0204075bcd15
    expect(der(bigintBytes(123456789n))).to.equal('0204075bcd15')
    expect(der(Uint8Array.of(0x80))).to.equal('02020080')
    expect(der(Uint8Array.of(0, 0, 0x7f))).to.equal('02017f')
    expect(der(Uint8Array.of(0, 0, 0x80))).to.equal('02020080')
    expect(der(new Uint8Array(0))).to.equal('020100')
    expect(der(bigintBytes(0n))).to.equal('020100')
    expect(() => bigintBytes(-1n)).to.throw(RangeError)
  })

  it('agrees with a naive reference for any non-negative value, and reads back the magnitude (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({min: 0n, max: (1n << 200n) - 1n}), fc.nat({max: 3}), (value, zeros) => {
        const bytes = Uint8Array.from([...new Uint8Array(zeros), ...bigintBytes(value)])
        expect(der(bytes)).to.equal(referenceDer(value))
        const back = BigInt(`0x${Buffer.from(integerBytes(unsignedInteger(bytes))).toString('hex') || '0'}`)
        expect(back).to.equal(value)
      }),
    )
  })

  it('copies exactly the viewed bytes into an ArrayBuffer, even from a pooled Buffer', () => {
    const pooled = Buffer.from('abcd', 'hex') // shares Node's 8 KiB pool
    const copy = toArrayBuffer(pooled)
    expect(copy.byteLength).to.equal(2)
    expect(Buffer.from(copy).toString('hex')).to.equal('abcd')
    expect(toArrayBuffer(pooled.subarray(1)).byteLength).to.equal(1)
  })
})
