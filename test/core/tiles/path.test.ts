import {expect} from 'chai'
import fc from 'fast-check'
import {formatTileIndex, formatTilePath, parseTilePath} from '../../../src/core/tiles/index.js'

describe('C2SP tlog-tiles paths', () => {
  it('writes N in groups of three digits with x prefixes (the spec example and large N)', () => {
    expect(formatTileIndex(1234067)).to.equal('x001/x234/067')
    expect(formatTileIndex(0)).to.equal('000')
    expect(formatTileIndex(999)).to.equal('999')
    expect(formatTileIndex(1000)).to.equal('x001/000')
    expect(formatTileIndex(2 ** 53 - 1)).to.equal('x009/x007/x199/x254/x740/991')
    expect(formatTilePath({level: 2, index: 1234067, width: 256})).to.equal('tile/2/x001/x234/067')
    expect(formatTilePath({level: 'entries', index: 5, width: 17})).to.equal('tile/entries/005.p/17')
  })

  it('parses what it writes', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({min: 0, max: 63}), fc.constant('entries' as const)),
        fc.maxSafeNat(),
        fc.integer({min: 1, max: 256}),
        (level, index, width) => {
          expect(parseTilePath(formatTilePath({level, index, width}).slice('tile/'.length))).to.deep.equal({
            level,
            index,
            width,
          })
        },
      ),
    )
  })

  for (const path of [
    '0/1234',
    '0/12',
    '0/x000/001',
    '0/001/002',
    '64/000',
    '01/000',
    '0/000.p/0',
    '0/000.p/256',
    '0/000.p/010',
    '0/000.p/',
    'entries/x1/000',
    '0/000/',
  ]) {
    it(`refuses ${path}`, () => {
      expect(parseTilePath(path)).to.equal(undefined)
    })
  }
})
