/** What `serve --forward` accepts, and the ids that tie a destination to its stored position. */
import {expect} from 'chai'
import {
  ForwardingError,
  parseDestination,
  parseFilterText,
  parseHeader,
} from '../../../src/services/forwarding/index.js'

describe('forwarding destinations (--forward, --forward-filter, --forward-header)', () => {
  it('reads the four kinds, with the default ports of syslog (514, RFC 5425: 6514)', () => {
    const tcp = parseDestination('syslog+tcp://siem.example')
    expect(tcp).to.deep.include({kind: 'syslog', target: {host: 'siem.example', port: 514, tls: false, href: tcp.url}})
    expect(parseDestination('syslog+tls://siem.example').target).to.include({port: 6514, tls: true})
    const otlp = parseDestination('otlp+http://collector:4318/v1/logs')
    expect(otlp).to.deep.include({
      kind: 'otlp',
      target: {host: 'collector', port: 4318, tls: false, href: 'http://collector:4318/v1/logs'},
    })
    expect(parseDestination('otlp+https://collector/v1/logs').target).to.include({port: 443, tls: true})
    expect(parseDestination('https://hooks.example/a?b=1')).to.deep.include({
      kind: 'webhook',
      url: 'https://hooks.example/a?b=1',
    })
  })

  it('gives the same URL and filter the same id, and another URL or filter another', () => {
    const id = parseDestination('https://hooks.example/a', 'agent_id=x').id
    expect(id).to.match(/^[0-9a-f]{16}$/)
    expect(parseDestination('https://hooks.example/a', 'agent_id=x').id).to.equal(id)
    expect(parseDestination('https://hooks.example/b', 'agent_id=x').id).to.not.equal(id)
    expect(parseDestination('https://hooks.example/a', 'agent_id=y').id).to.not.equal(id)
  })

  for (const [url, message] of [
    ['not a url', /--forward not a url is not a URL/],
    ['ftp://x.example', /unknown scheme ftp/],
    ['syslog+udp://x.example', /unknown scheme syslog\+udp/],
    ['syslog+tcp://x.example/path', /has no path/],
    ['https://user:pw@hooks.example/', /credentials with --forward-header/],
  ] as const) {
    it(`refuses ${url}`, () => {
      expect(() => parseDestination(url)).to.throw(ForwardingError, message)
    })
  }

  it('takes the filters of GET /v1/events, and refuses others and bad values', () => {
    expect(parseFilterText('agent_id=a&label.env=prod&since=2026-01-01')).to.deep.equal({
      agent_id: 'a',
      labels: {env: 'prod'},
      since: '2026-01-01T00:00:00.000Z',
    })
    expect(() => parseFilterText('limit=5')).to.throw(ForwardingError, /limit is not a filter/)
    expect(() => parseFilterText('since=yesterday')).to.throw(ForwardingError, /since must be an ISO 8601 time/)
  })

  it('reads a header as Name: value, and never echoes the value of a bad one', () => {
    expect(parseHeader('Authorization:  Bearer abc ')).to.deep.equal(['Authorization', 'Bearer abc'])
    expect(() => parseHeader('Bad Name: secret')).to.throw(ForwardingError, /--forward-header Bad Name: must be/)
    expect(() => parseHeader('no-colon-secret'))
      .to.throw(ForwardingError)
      .with.property('message')
      .that.does.not.contain('secret')
  })
})
