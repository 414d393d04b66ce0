import {expect} from 'chai'
import {execFile} from 'node:child_process'
import * as http from 'node:http'
import * as net from 'node:net'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {Readable} from 'node:stream'
import {useService} from '../support/harness.js'
import {useTempDir} from '../support/hooks.js'

const MiB = 1024 * 1024

/** An event whose `input` makes its JSON `bytes` long: over any limit, but a well-formed request. */
function eventOfSize(bytes: number): string {
  const head = '{"agent_id":"big","action_type":"TOOL_CALL","action_name":"upload","input":"'
  return `${head}${'x'.repeat(bytes - head.length - 2)}"}`
}

interface Answer {
  status: number
  body: string
}

/** 64 KiB pieces, so that a chunked upload is many chunks, as a streaming client sends it. */
function pieces(body: string): Buffer[] {
  const bytes = Buffer.from(body)
  const out: Buffer[] = []
  for (let at = 0; at < bytes.length; at += 64 * 1024) out.push(bytes.subarray(at, at + 64 * 1024))
  return out
}

/** With Node's global agent, as most code sends; any error on the request (EPIPE, a reset) fails. */
function viaHttpRequest(url: string, body: string, chunked: boolean, close = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = {'content-type': 'application/json'}
    if (!chunked) headers['content-length'] = Buffer.byteLength(body)
    let answer: Answer | undefined
    let failure: Error | undefined
    // agent: false sends `Connection: close`: Node then closes the socket right after the answer.
    const request = http.request(url, {method: 'POST', headers, ...(close ? {agent: false} : {})}, (response) => {
      let text = ''
      response.on('data', (d) => (text += d))
      response.on('end', () => (answer = {status: response.statusCode!, body: text}))
    })
    request.on('error', (error) => (failure = error))
    request.on('close', () => (failure || !answer ? reject(failure ?? new Error('no answer')) : resolve(answer)))
    // Chunked: piece by piece, as a client streams; with a length: in one write, as most send a body.
    if (chunked) Readable.from(pieces(body)).pipe(request)
    else request.end(body)
  })
}

async function viaFetch(url: string, body: string, chunked: boolean): Promise<Answer> {
  const init: RequestInit & {duplex?: 'half'} = {method: 'POST', headers: {'content-type': 'application/json'}}
  if (chunked) {
    init.body = Readable.toWeb(Readable.from(pieces(body))) as ReadableStream
    init.duplex = 'half'
  } else {
    init.body = body
  }
  const response = await fetch(url, init)
  return {status: response.status, body: await response.text()}
}

function viaCurl(url: string, file: string, chunked: boolean, close = false): Promise<Answer> {
  const args = ['-sS', '-X', 'POST', '-H', 'content-type: application/json', '--data-binary', `@${file}`]
  if (close) args.push('-H', 'Connection: close')
  args.push('-w', '\n%{http_code}', url)
  if (chunked) args.unshift('-H', 'transfer-encoding: chunked')
  return new Promise((resolve, reject) => {
    execFile('curl', args, {maxBuffer: 64 * MiB}, (error, stdout, stderr) => {
      if (error) return reject(new Error(`curl: ${stderr || error.message}`))
      const split = stdout.lastIndexOf('\n')
      resolve({status: Number(stdout.slice(split + 1)), body: stdout.slice(0, split)})
    })
  })
}

describe('a body over its limit: the client sees 413', function () {
  this.timeout(180_000)
  const dir = useTempDir('suite')
  const service = useService({}, 'suite')

  const cases = [
    {what: 'a 17 MiB batch', path: '/v1/batch', body: () => `[${eventOfSize(17 * MiB)}]`},
    {what: 'a 2 MiB event', path: '/v1/events', body: () => eventOfSize(2 * MiB)},
  ]
  for (const {what, path: route, body: makeBody} of cases) {
    for (const chunked of [false, true]) {
      const framing = chunked ? 'chunked' : 'with Content-Length'
      it(`answers ${what} with 413 to http.request, fetch and curl, ${framing}`, async () => {
        const body = makeBody()
        const file = path.join(dir, 'body.json')
        await writeFile(file, body)
        const url = `${service.url}${route}`
        // A reset depends on timing: each client sends several times.
        for (let round = 0; round < 6; round++) {
          const answers = {
            'http.request': await viaHttpRequest(url, body, chunked),
            'http.request, Connection: close': await viaHttpRequest(url, body, chunked, true),
            fetch: await viaFetch(url, body, chunked),
            curl: await viaCurl(url, file, chunked),
            'curl, Connection: close': await viaCurl(url, file, chunked, true),
          }
          for (const [client, answer] of Object.entries(answers)) {
            expect(answer.status, `${client}: ${answer.body}`).to.equal(413)
            expect(JSON.parse(answer.body).error.code, client).to.equal('payload_too_large')
          }
        }
        expect(await service.services.tree.size(), 'nothing was recorded').to.equal(0)
      })
    }
  }

  it('does not wait for a body declared larger than 64 MiB: 413 with Connection: close', async () => {
    const socket = net.connect(new URL(service.url).port as unknown as number, '127.0.0.1')
    const head = `POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${65 * MiB}`
    socket.write(`${head}\r\n\r\n{"agent_id":`)
    const answer = await new Promise<string>((resolve) => {
      let data = ''
      socket.on('data', (d) => (data += d))
      socket.on('close', () => resolve(data))
    })
    expect(answer).to.match(/^HTTP\/1\.1 413 Payload Too Large\r\n/)
    expect(answer).to.match(/\r\nConnection: close\r\n/i)
  })

  it('stays usable for the next request on the same keep-alive connection', async () => {
    const agent = new http.Agent({keepAlive: true, maxSockets: 1})
    const post = (route: string, body: string) =>
      new Promise<Answer & {socket: unknown}>((resolve, reject) => {
        const options = {method: 'POST', agent, headers: {'content-type': 'application/json'}}
        const request = http.request(`${service.url}${route}`, options, (response) => {
          let text = ''
          response.on('data', (d) => (text += d))
          response.on('end', () => resolve({status: response.statusCode!, body: text, socket: request.socket}))
        })
        request.on('error', reject)
        Readable.from(pieces(body)).pipe(request)
      })
    try {
      const refused = await post('/v1/events', eventOfSize(2 * MiB))
      expect(refused.status).to.equal(413)
      const next = await post('/v1/events', '{"agent_id":"a","action_type":"X","action_name":"n"}')
      expect(next.status, next.body).to.equal(201)
    } finally {
      agent.destroy()
    }
  })
})
