import {expect} from 'chai'
import {spawnSync} from 'node:child_process'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {BIN, runCli, startServe} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {useTempDir} from '../support/hooks.js'
import {SCOPE_HINT} from '../../src/cli/next-step.js'

const MiB = 1024 * 1024

function eventLine(i: number, inputBytes = 0): string {
  const event: Record<string, unknown> = {agent_id: 'bulk-bot', action_type: 'TOOL_CALL', action_name: `step-${i}`}
  if (inputBytes > 0) event.input = {blob: 'x'.repeat(inputBytes)}
  return JSON.stringify(event)
}

/**
 * A stand-in for the service's POST /v1/batch: batch `n` (1-based) is handed to `answer`, which
 * answers it and returns true, or returns false to have it answered as the service would.
 */
async function standInServer(
  answer: (n: number, req: http.IncomingMessage, res: http.ServerResponse) => boolean,
): Promise<{url: string; batches(): number; close(): Promise<unknown>}> {
  let batches = 0
  const fake = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      if (answer(++batches, req, res)) return
      const bodies = JSON.parse(Buffer.concat(chunks).toString()) as unknown[]
      res.writeHead(201, {'content-type': 'application/json; charset=utf-8'})
      res.end(JSON.stringify(bodies.map((body, index) => ({index, status: 201, event: body}))))
    })
  })
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`,
    batches: () => batches,
    close: () => new Promise((resolve) => fake.close(resolve)),
  }
}

describe('audit-trail ingest --server, batches and failures', function () {
  this.timeout(60_000)
  const dir = useTempDir()

  it(
    'splits batches under the 16 MiB body limit and rejects only an event over the 1 MiB of one event, as ' +
      '--data-dir does',
    async () => {
      // Twenty events of 0.9 MiB are 18 MiB together: one batch of them would be refused with 413.
      const lines = Array.from({length: 20}, (_, i) => eventLine(i + 1, 0.9 * MiB))
      lines.splice(2, 0, eventLine(99, 2 * MiB))
      const file = path.join(dir, 'big.ndjson')
      await writeFile(file, lines.join('\n') + '\n')
      const server = await startServe(['--data-dir', path.join(dir, 'data')])
      const expected = Array.from({length: 20}, (_, i) => `step-${i + 1}`)
      try {
        const res = await runCli(['ingest', file, '--server', server.url])
        expect(res.code, res.stderr).to.equal(2)
        expect(res.stdout).to.contain('20 accepted, 1 rejected')
        expect(res.stdout).to.match(/line 3: the event is \d+ bytes of JSON, more than the 1048576 bytes of one event/)
        const list = await runCli(['events', 'list', '--json', '--limit', '100', '--server', server.url])
        expect(JSON.parse(list.stdout).map((e: any) => e.action_name)).to.deep.equal(expected)
      } finally {
        expect(await server.stop('SIGTERM')).to.equal(0)
      }
      const direct = await runCli(['ingest', file, '--data-dir', path.join(dir, 'direct')])
      expect(direct.code, direct.stderr).to.equal(2)
      expect(direct.stdout).to.contain('20 accepted, 1 rejected')
      expect(direct.stdout).to.match(/line 3: the event is \d+ bytes of JSON, more than the 1048576 bytes of one event/)
    },
  )

  it('rejects a line that is not UTF-8 instead of recording U+FFFD, and keeps every other character', async () => {
    const file = path.join(dir, 'mixed.ndjson')
    const line = (name: string) =>
      Buffer.from(`{"agent_id":"utf8-bot","action_type":"X","action_name":"${name}"}\n`, 'utf8')
    await writeFile(
      file,
      Buffer.concat([
        line('naïve 東京 😀'),
        Buffer.from('{"agent_id":"utf8-bot","action_type":"X","action_name":"bad \xff"}\r\n', 'latin1'),
        line('after'),
      ]),
    )
    const dataDir = path.join(dir, 'data')
    const res = await runCli(['ingest', file, '--data-dir', dataDir])
    expect(res.code).to.equal(2)
    expect(res.stdout).to.contain('2 accepted, 1 rejected')
    expect(res.stdout).to.contain('line 2: not valid UTF-8')
    const list = await runCli(['events', 'list', '--json', '--data-dir', dataDir])
    expect(JSON.parse(list.stdout).map((e: any) => e.action_name)).to.deep.equal(['naïve 東京 😀', 'after'])
  })

  it('rejects an event that gives a member twice, naming its path, in NDJSON, an array and an object', async () => {
    const event = (name: string, labels = '"env":"prod"') =>
      `{"agent_id":"dup-bot","action_type":"X","action_name":"${name}","labels":{${labels}},"input":{"q":[{"k":1}]}}`
    const inputs: Record<string, [string, string[], string[]]> = {
      ndjson: [
        [event('a'), event('b', '"env":"FAKE-staging","env":"prod"'), event('c')].join('\n'),
        ['a', 'c'],
        ['line 2: it has the member $.labels.env twice'],
      ],
      array: [
        `[\n${event('a')},\n${event('b').replace('"k":1', '"k":1,"k":2')},\n${event('c', '"a":"1","\\u0061":"2"')}\n]`,
        ['a'],
        [
          'element 1: the input has the member $[1].input.q[0].k twice',
          'element 2: the input has the member $[2].labels.a twice',
        ],
      ],
      object: [
        // On more than one line: a document, not NDJSON.
        event('a').replace('{', '{\n').replace('"action_name"', '"action_name":"other","action_name"'),
        [],
        ['the object: the input has the member $.action_name twice'],
      ],
    }
    for (const [name, [text, recorded, reasons]] of Object.entries(inputs)) {
      const file = path.join(dir, `${name}.json`)
      await writeFile(file, text, 'utf8')
      const dataDir = path.join(dir, name)
      const res = await runCli(['ingest', file, '--data-dir', dataDir])
      expect(res.code, `${name}: ${res.stdout}${res.stderr}`).to.equal(2)
      expect(res.stdout, name).to.contain(`${recorded.length} accepted, ${reasons.length} rejected`)
      for (const reason of reasons) expect(res.stdout, name).to.contain(reason)
      const list = await runCli(['events', 'list', '--json', '--data-dir', dataDir])
      expect(
        JSON.parse(list.stdout).map((e: any) => e.action_name),
        name,
      ).to.deep.equal(recorded)
    }
  })

  it('ignores a byte order mark at the start of NDJSON, an array or an object, and only there', async () => {
    const event = (name: string) => `{"agent_id":"bom-bot","action_type":"X","action_name":"${name}"}`
    const inputs = {
      ndjson: `\uFEFF${event('a')}\n${event('b')}\n`,
      array: `\uFEFF[\n${event('a')},\n${event('b')}\n]`,
      object: `\uFEFF${event('a')}`,
    }
    await Promise.all(
      Object.entries(inputs).map(async ([name, text]) => {
        await writeFile(path.join(dir, `${name}.json`), text, 'utf8')
        const res = await runCli(['ingest', path.join(dir, `${name}.json`), '--data-dir', path.join(dir, name)])
        expect(res.code, `${name}: ${res.stderr}`).to.equal(0)
        expect(res.stdout, name).to.contain(`${name === 'object' ? 1 : 2} accepted, 0 rejected`)
      }),
    )
    // Anywhere else it is a character of the input, which JSON does not allow between values.
    await writeFile(path.join(dir, 'later.ndjson'), `${event('a')}\n\uFEFF${event('b')}\n`, 'utf8')
    const later = await runCli(['ingest', path.join(dir, 'later.ndjson'), '--data-dir', path.join(dir, 'later')])
    expect(later.code).to.equal(2)
    expect(later.stdout).to.contain('line 2: not valid JSON')
  })

  it('says how far the input got when the server goes away in the middle', async () => {
    // Answers the first batch as the service would, then drops the connection.
    const fake = await standInServer((n, req) => {
      if (n === 1) return false
      req.socket.destroy()
      return true
    })
    try {
      const file = path.join(dir, 'events.ndjson')
      await writeFile(file, Array.from({length: 1500}, (_, i) => eventLine(i + 1)).join('\n') + '\n')
      const res = await runCli(['ingest', file, '--server', fake.url])
      expect(res.code).to.equal(3)
      expect(fake.batches()).to.equal(2)
      expect(res.stderr.trim().split('\n')).to.have.length(1)
      expect(res.stderr).to.contain(
        '1000 events were recorded before, from the input through line 1000; the batch of line 1001 to line 1500 ' +
          'may or may not have been recorded.',
      )
    } finally {
      await fake.close()
    }
  })
})

describe('audit-trail ingest --server, a server that cannot be reached', function () {
  this.timeout(60_000)
  let dir: string
  let file: string
  before(async () => {
    dir = await tempDir()
    file = path.join(dir, 'events.ndjson')
    await writeFile(file, Array.from({length: 1500}, (_, i) => eventLine(i + 1)).join('\n') + '\n')
  })
  after(async () => {
    await removeDir(dir)
  })

  it('says nothing was sent when no server listens', async () => {
    // A port that was just free: connecting to it is refused.
    const probe = http.createServer()
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`
    await new Promise((resolve) => probe.close(resolve))
    const res = await runCli(['ingest', file, '--server', url])
    expect(res.code).to.equal(3)
    expect(res.stderr.trim().split('\n')).to.have.length(1)
    expect(res.stderr).to.match(/^Error: cannot reach the server at .*ECONNREFUSED.*; nothing was sent\n$/)
    expect(res.stderr).not.to.contain('may or may not')
  })

  it('says the batch after the server stopped listening was not sent', async () => {
    // Answers the first batch as the service would, closing its connection and its port.
    let batches = 0
    const fake = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        batches++
        fake.close()
        const bodies = JSON.parse(Buffer.concat(chunks).toString()) as unknown[]
        res.writeHead(201, {'content-type': 'application/json; charset=utf-8', connection: 'close'})
        res.end(JSON.stringify(bodies.map((body, index) => ({index, status: 201, event: body}))))
      })
    })
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`
    const res = await runCli(['ingest', file, '--server', url])
    expect(batches).to.equal(1)
    expect(res.code).to.equal(3)
    const stopped = '1000 events were recorded before, from the input through line 1000; '
    expect(res.stderr).to.contain(`${stopped}the batch of line 1001 to line 1500 was not sent.`)
  })
})

describe('audit-trail ingest --server, a batch refused by the server', function () {
  this.timeout(60_000)

  /** A stand-in server that answers batch `refuseAt` (1-based) with 403, the ones before as the service would. */
  const refusingServer = (refuseAt: number) =>
    standInServer((n, _req, res) => {
      if (n !== refuseAt) return false
      res.writeHead(403, {'content-type': 'application/json; charset=utf-8'})
      res.end(JSON.stringify({error: {code: 'forbidden', message: 'the API key lacks the write scope'}}))
      return true
    })

  it("says the refused batch was not recorded, and only the server's sentence when nothing was", async () => {
    const dir = await tempDir()
    try {
      const file = path.join(dir, 'events.ndjson')
      await writeFile(file, Array.from({length: 1500}, (_, i) => eventLine(i + 1)).join('\n') + '\n')
      for (const [refuseAt, expected] of [
        [1, `Error: the API key lacks the write scope: ${SCOPE_HINT}`],
        [
          2,
          `Error: the API key lacks the write scope: ${SCOPE_HINT}. 1000 events` +
            ' were recorded before, from the input through ' +
            'line 1000; the batch of line 1001 to line 1500 was not recorded.',
        ],
      ] as const) {
        const server = await refusingServer(refuseAt)
        try {
          const res = await runCli(['ingest', file, '--server', server.url])
          expect(res.code).to.equal(2)
          expect(res.stderr.trim()).to.equal(expected)
        } finally {
          await server.close()
        }
      }
    } finally {
      await removeDir(dir)
    }
  })
})

describe('audit-trail ingest on a terminal', function () {
  this.timeout(60_000)

  it('shows a coloured progress spinner on a terminal, and one without colour with NO_COLOR', async () => {
    const dir = await tempDir()
    try {
      const file = path.join(dir, 'events.ndjson')
      await writeFile(file, Array.from({length: 200}, (_, i) => eventLine(i)).join('\n'))
      // script(1) runs the command on a pseudo-terminal (stdout and stderr both), 100 columns wide.
      // ora draws no animation where CI is set (a CI log is no terminal to redraw), so the
      // terminal runs drop it from the environment and the last run sets it.
      const onTerminal = (env: string, dataDir: string) =>
        spawnSync(
          'script',
          [
            '-qc',
            `stty cols 100; env -u CI ${env} "${process.execPath}" "${BIN}" ingest "${file}" --data-dir "${dataDir}"`,
            '/dev/null',
          ],
          {encoding: 'utf8'},
        )
      const coloured = onTerminal('', path.join(dir, 'a'))
      expect(coloured.stdout).to.contain('\u001b[36m')
      expect(coloured.stdout).to.contain('\u001b[32m200 accepted\u001b[39m, 0 rejected\r\n')
      const plain = onTerminal('NO_COLOR=1', path.join(dir, 'b'))
      expect(plain.stdout).to.contain('ingesting')
      // The summary follows ora's cursor-show sequence, uncoloured.
      expect(plain.stdout).to.contain('\u001b[?25h200 accepted, 0 rejected\r\n')
      expect(plain.stdout).not.to.match(/\u001b\[3\d?m/)
      const inCi = onTerminal('CI=true', path.join(dir, 'c'))
      expect(inCi.stdout).to.match(/^- ingesting\r\n\u001b\[32m200 accepted\u001b\[39m, 0 rejected\r\n/)
    } finally {
      await removeDir(dir)
    }
  })
})
