/**
 * Forwarding to a real syslog receiver: Debian's rsyslogd with imtcp, over plain TCP and over TLS
 * (gtls), each message checked as rsyslog parsed it (RFC 5424 fields) and byte for byte.
 */
import {expect} from 'chai'
import {hostname} from 'node:os'
import {readFile} from 'node:fs/promises'
import {startService, type RunningService} from '../../../src/server/start.js'
import {parseDestination} from '../../../src/services/forwarding/index.js'
import {SD_ID, syslogMessage} from '../../../src/services/forwarding/syslog-message.js'
import {removeDir, tempDir} from '../../support/harness.js'
import {haveRsyslog, makeCertificates, RSYSLOGD, startRsyslog, waitFor, type Rsyslog} from './receivers.js'

async function post(url: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify(body),
  })
  expect(response.status, await response.clone().text()).to.be.oneOf([200, 201])
  return response.json()
}

async function storedEvents(url: string): Promise<any[]> {
  return (await fetch(`${url}/v1/events?limit=1000`)).json() as Promise<any[]>
}

const tricky = {
  agent_id: 'support-bot',
  action_type: 'TOOL_CALL',
  action_name: 'quote "this" \\ and ]close',
  action_status: 'error',
  input: {text: 'grüße, 日本, 🙂'},
  labels: {env: 'prod'},
}

describe('forwarding to rsyslog (syslog over TCP and TLS, RFC 5424 with RFC 6587 octet counting)', function () {
  this.timeout(60_000)
  let dir: string
  let rsyslog: Rsyslog | undefined
  let service: RunningService | undefined

  before(() => {
    // .ci/run installs it; without it these tests fail rather than skip, as the dashboard's without chromium.
    if (!haveRsyslog) throw new Error(`${RSYSLOGD} is missing: install Debian's rsyslog and rsyslog-gnutls`)
  })
  beforeEach(async () => {
    dir = await tempDir()
  })
  afterEach(async () => {
    await service?.close()
    service = undefined
    await rsyslog?.remove()
    rsyslog = undefined
    await removeDir(dir)
  })

  async function checkArrived(url: string, count: number): Promise<void> {
    const lines = await waitFor(async () => {
      const got = await rsyslog!.lines()
      return got.length >= count && got
    }, `${count} messages at rsyslog`)
    const events = await storedEvents(url)
    expect(lines).to.have.length(events.length)
    lines.forEach((line, i) => {
      const event = events[i]
      const [version, appName, msgid, structured, ...raw] = line.split('|')
      expect(version).to.equal('1')
      expect(appName).to.equal('audit-trail')
      expect(msgid).to.equal(event.action_type)
      expect(structured).to.contain(`[${SD_ID} trail="default" index="${event.index}" id="${event.id}"`)
      expect(structured).to.contain(`hash="${event.hash}"]`)
      const rawMessage = raw.join('|')
      expect(rawMessage).to.equal(syslogMessage(event, 'default', hostname()))
      expect(JSON.parse(rawMessage.slice(rawMessage.indexOf('\uFEFF') + 1))).to.deep.equal(event)
    })
  }

  it('sends every event over TCP, in index order, exactly as recorded, also across a receiver outage', async () => {
    rsyslog = await startRsyslog()
    const destination = parseDestination(`syslog+tcp://127.0.0.1:${rsyslog.port}`)
    service = await startService({
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      forwarding: {destinations: [destination], retry: {initialMs: 50, maxMs: 200}, onError: () => undefined},
    })
    await post(service.url, '/v1/batch', [
      tricky,
      ...Array.from({length: 20}, (_, n) => ({...tricky, action_name: `s${n}`})),
    ])
    await checkArrived(service.url, 21)

    await rsyslog.stop()
    await post(service.url, '/v1/events', {...tricky, action_name: 'while the receiver is down'})
    // Read between two attempts: during one the state is `sending`, with the last error still shown.
    const status = await waitFor(async () => {
      const [now] = await service!.forwarding.status()
      return now!.state === 'retrying' && now!.last_error !== null && now
    }, 'retrying with the error in status')
    expect(status.trails[0]!.lag_events).to.be.greaterThan(0)
    await post(service.url, '/v1/batch', [
      {...tricky, action_name: 'a'},
      {...tricky, action_name: 'b'},
    ])
    await rsyslog.restart()
    await checkArrived(service.url, 24)
  })

  it('sends over TLS to a receiver whose certificate chains to --forward-ca', async () => {
    const certificates = makeCertificates(dir)
    rsyslog = await startRsyslog(certificates)
    service = await startService({
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      forwarding: {
        destinations: [parseDestination(`syslog+tls://127.0.0.1:${rsyslog.port}`)],
        tls: {ca: await readFile(certificates.ca, 'utf8')},
        retry: {initialMs: 50, maxMs: 200},
        onError: () => undefined,
      },
    })
    await post(service.url, '/v1/batch', [tricky, {...tricky, action_name: 'second'}])
    await checkArrived(service.url, 2)
  })

  it('presents --forward-cert and --forward-key to a receiver that asks for a client certificate', async () => {
    const certificates = makeCertificates(dir)
    rsyslog = await startRsyslog(certificates, true)
    const start = async (client: boolean) =>
      startService({
        dataDir: dir,
        host: '127.0.0.1',
        port: 0,
        forwarding: {
          destinations: [parseDestination(`syslog+tls://127.0.0.1:${rsyslog!.port}`)],
          tls: {
            ca: await readFile(certificates.ca, 'utf8'),
            ...(client
              ? {
                  cert: await readFile(certificates.clientCert, 'utf8'),
                  key: await readFile(certificates.clientKey, 'utf8'),
                }
              : {}),
          },
          retry: {initialMs: 50, maxMs: 200},
          onError: () => undefined,
        },
      })
    // Without a client certificate rsyslog drops the connection: nothing arrives.
    service = await start(false)
    await post(service.url, '/v1/events', tricky)
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(await rsyslog.lines()).to.deep.equal([])
    await service.close()
    service = await start(true)
    await checkArrived(service.url, 1)
  })

  it('does not send over TLS to a receiver whose certificate does not chain to the CA given', async () => {
    const certificates = makeCertificates(dir)
    rsyslog = await startRsyslog(certificates)
    const errors: string[] = []
    service = await startService({
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      forwarding: {
        destinations: [parseDestination(`syslog+tls://127.0.0.1:${rsyslog.port}`)],
        retry: {initialMs: 50, maxMs: 200},
        onError: (message) => errors.push(message),
      },
    })
    await post(service.url, '/v1/events', tricky)
    await waitFor(() => errors.length > 0, 'a TLS error')
    expect(errors[0]).to.match(/certificate/)
    expect(await rsyslog.lines()).to.deep.equal([])
    const [status] = await service.forwarding.status()
    expect(status!.trails[0]!.position).to.equal(0)
  })
})
