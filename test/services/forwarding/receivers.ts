/**
 * Receivers the forwarding tests send to: a real rsyslogd (Debian's) run in the foreground with a
 * configuration of the test's own on a free loopback port, an in-process webhook, and an in-process
 * OTLP/HTTP logs receiver decoding with the project's protobuf definitions.
 */
import {execFileSync, spawn, type ChildProcess} from 'node:child_process'
import {existsSync, writeFileSync} from 'node:fs'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import {decodeProtobufLogsExport} from '../../../src/services/otlp/protobuf.js'
import {freePort} from '../../support/ports.js'

type Truthy<T> = Exclude<T, false | undefined | null | 0 | ''>

export async function waitFor<T>(check: () => T | Promise<T>, what: string, timeoutMs = 20_000): Promise<Truthy<T>> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value as Truthy<T>
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export const RSYSLOGD = '/usr/sbin/rsyslogd'
export const haveRsyslog = existsSync(RSYSLOGD)

/**
 * A CA, a server certificate for 127.0.0.1 and a client certificate it issued, made with the
 * openssl command (PEM files in `dir`).
 */
export function makeCertificates(dir: string): Record<'ca' | 'cert' | 'key' | 'clientCert' | 'clientKey', string> {
  const file = (name: string) => path.join(dir, name)
  const run = (...args: string[]) => execFileSync('openssl', args, {stdio: 'pipe', cwd: dir})
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
  run('req', '-x509', ...ec, '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=forwarding test CA')
  for (const [name, subject, extension] of [
    ['server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth'],
    ['client', '/CN=audit-trail', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    writeFileSync(file(`${name}.ext`), `${extension}\n`)
    run('req', ...ec, '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', subject)
    const ca = ['-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-days', '2']
    run('x509', '-req', '-in', `${name}.csr`, ...ca, '-out', `${name}.pem`, '-extfile', `${name}.ext`)
  }
  return {
    ca: file('ca.pem'),
    cert: file('server.pem'),
    key: file('server-key.pem'),
    clientCert: file('client.pem'),
    clientKey: file('client-key.pem'),
  }
}

export interface Rsyslog {
  port: number
  /** The lines written so far, each `protocol-version|app-name|msgid|structured-data|rawmsg`. */
  lines(): Promise<string[]>
  stop(): Promise<void>
  /** Starts it again on the same port (after stop), keeping what it wrote. */
  restart(): Promise<void>
  remove(): Promise<void>
}

/** rsyslogd in the foreground: imtcp (TLS with gtls when `tls` is given), every message to a file. */
export async function startRsyslog(
  tls?: {ca: string; cert: string; key: string},
  clientCertificates = false,
): Promise<Rsyslog> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-rsyslog-'))
  const port = await freePort()
  const out = path.join(dir, 'received.log')
  const tlsGlobal = tls
    ? ` defaultNetstreamDriver="gtls" defaultNetstreamDriverCAFile="${tls.ca}"` +
      ` defaultNetstreamDriverCertFile="${tls.cert}" defaultNetstreamDriverKeyFile="${tls.key}"`
    : ''
  // x509/certvalid: a client must present a certificate the CA issued (mutual TLS, RFC 5425 5.3).
  const authMode = clientCertificates ? 'x509/certvalid' : 'anon'
  const tlsModule = tls ? ` StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="${authMode}"` : ''
  await writeFile(
    path.join(dir, 'rsyslog.conf'),
    `global(workDirectory="${dir}" maxMessageSize="2m"${tlsGlobal})
module(load="imtcp"${tlsModule})
input(type="imtcp" address="127.0.0.1" port="${port}")
template(name="fields" type="string" string="%protocol-version%|%app-name%|%msgid%|%structured-data%|%rawmsg%\\n")
*.* action(type="omfile" file="${out}" template="fields" asyncWriting="off" flushOnTXEnd="on")
`,
  )
  let child: ChildProcess | undefined
  const start = async () => {
    const args = ['-n', '-f', path.join(dir, 'rsyslog.conf'), '-i', path.join(dir, 'rsyslogd.pid')]
    const started = spawn(RSYSLOGD, args, {stdio: ['ignore', 'ignore', 'pipe']})
    let errors = ''
    started.stderr!.on('data', (data) => (errors += data))
    child = started
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          if (started.exitCode !== null) throw new Error(`rsyslogd exited: ${errors}`)
          const socket = net.connect(port, '127.0.0.1')
          socket.once('connect', () => (socket.destroy(), resolve(true)))
          socket.once('error', () => resolve(false))
        }),
      'rsyslogd to listen',
    )
  }
  const stop = async () => {
    const running = child
    child = undefined
    if (!running || running.exitCode !== null) return
    const exited = new Promise((resolve) => running.once('exit', resolve))
    running.kill('SIGTERM')
    await exited
  }
  await start()
  return {
    port,
    lines: async () => (existsSync(out) ? (await readFile(out, 'utf8')).split('\n').filter((line) => line !== '') : []),
    stop,
    restart: start,
    remove: async () => {
      await stop()
      await rm(dir, {recursive: true, force: true})
    },
  }
}

/** An HTTP receiver in this process; `answer` decides each response's status (200 by default). */
export interface HttpReceiver {
  url: string
  requests: {headers: http.IncomingHttpHeaders; body: Buffer}[]
  answer: (request: {headers: http.IncomingHttpHeaders; body: Buffer}) => number
  /** Waits this long before answering (a slow destination). */
  delayMs: number
  close(): Promise<void>
}

export async function startHttpReceiver(): Promise<HttpReceiver> {
  const receiver: HttpReceiver = {url: '', requests: [], answer: () => 200, delayMs: 0, close: async () => undefined}
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      if (receiver.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, receiver.delayMs))
      const request = {headers: req.headers, body: Buffer.concat(chunks)}
      const status = receiver.answer(request)
      if (status >= 200 && status < 300) receiver.requests.push(request)
      res.writeHead(status, {'content-type': 'text/plain'}).end(status < 300 ? '' : `refused with ${status}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return receiver
}

/** The events of the NDJSON batches a webhook receiver took, in the order they came. */
export function ndjsonEvents(receiver: HttpReceiver): any[] {
  return receiver.requests.flatMap((request) =>
    request.body
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line)),
  )
}

/** The log records of the OTLP requests a receiver took, each request decoded from protobuf. */
export function otlpRecords(receiver: HttpReceiver): any[] {
  return receiver.requests.flatMap((request) => {
    const decoded = decodeProtobufLogsExport(request.body) as any
    return decoded.resourceLogs.flatMap((r: any) => r.scopeLogs.flatMap((s: any) => s.logRecords))
  })
}
