import {expect} from 'chai'
import {splitTrailPath} from '../../../src/server/trail-path.js'

describe('trail paths', () => {
  const cases: Array<[string, {trail?: string; path: string}]> = [
    ['/v1/events', {path: '/v1/events'}],
    ['/v1/trails/payments/events', {trail: 'payments', path: '/v1/events'}],
    ['/v1/trails/payments/events/abc/receipt', {trail: 'payments', path: '/v1/events/abc/receipt'}],
    ['/v1/trails/payments/entries', {trail: 'payments', path: '/entries'}],
    ['/v1/trails/payments/entries/abc', {trail: 'payments', path: '/entries/abc'}],
    ['/v1/trails/payments/entriesx', {trail: 'payments', path: '/v1/entriesx'}],
    // The trail itself, not one of its endpoints.
    ['/v1/trails', {path: '/v1/trails'}],
    ['/v1/trails/payments', {path: '/v1/trails/payments'}],
    ['/v1/trails/payments/', {path: '/v1/trails/payments/'}],
    ['/v1/trails/payments/seal', {path: '/v1/trails/payments/seal'}],
    ['/v1/trails/payments/seal/', {path: '/v1/trails/payments/seal/'}],
    ['/tlog/checkpoint', {path: '/tlog/checkpoint'}],
    ['/tlog/tile/0/000', {path: '/tlog/tile/0/000'}],
    ['/tlog/tile/entries/x001/000.p/3', {path: '/tlog/tile/entries/x001/000.p/3'}],
    ['/tlog/payments/checkpoint', {trail: 'payments', path: '/tlog/checkpoint'}],
    ['/tlog/payments/tile/1/000.p/2', {trail: 'payments', path: '/tlog/tile/1/000.p/2'}],
    // Trails named like the default's paths.
    ['/tlog/tile/checkpoint', {trail: 'tile', path: '/tlog/checkpoint'}],
    ['/tlog/tile/tile/0/000', {trail: 'tile', path: '/tlog/tile/0/000'}],
    ['/tlog/checkpoint/checkpoint', {trail: 'checkpoint', path: '/tlog/checkpoint'}],
    ['/tlog/checkpoint/tile/0/000', {trail: 'checkpoint', path: '/tlog/tile/0/000'}],
    ['/tlog/default/checkpoint', {trail: 'default', path: '/tlog/checkpoint'}],
    ['/healthz', {path: '/healthz'}],
  ]
  for (const [path, expected] of cases) {
    it(`${path} is ${expected.trail ?? 'unprefixed'} ${expected.path}`, () => {
      expect(splitTrailPath(path)).to.deep.equal(expected)
    })
  }
})
