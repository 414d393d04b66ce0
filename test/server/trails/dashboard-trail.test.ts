/** The dashboard's API paths on the trail the picker chose (public/api.js, docs/dashboard.md). */
import {expect} from 'chai'

const stored = new Map<string, string>()
Object.assign(globalThis, {
  sessionStorage: {
    getItem: (name: string) => stored.get(name) ?? null,
    setItem: (name: string, value: string) => void stored.set(name, value),
    removeItem: (name: string) => void stored.delete(name),
  },
})
// @ts-expect-error: the dashboard's plain JavaScript module has no types.
const api = await import('../../../public/api.js')

describe('dashboard: the chosen trail', () => {
  afterEach(() => api.setTrail(undefined))

  it('leaves every path as it is while no trail is chosen', () => {
    expect(api.onTrail('/v1/events?limit=5')).to.equal('/v1/events?limit=5')
  })

  it('sends /v1/ paths through the chosen trail, but not GET /v1/trails itself', () => {
    api.setTrail('payments')
    expect(api.onTrail('/v1/events?limit=5')).to.equal('/v1/trails/payments/events?limit=5')
    expect(api.onTrail('/v1/stream')).to.equal('/v1/trails/payments/stream')
    expect(api.onTrail('/v1/trails')).to.equal('/v1/trails')
    expect(api.onTrail('/healthz')).to.equal('/healthz')
    api.setTrail(undefined)
    expect(api.currentTrail()).to.equal(undefined)
  })
})
