import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {ROOT_CONTEXT, trace} from '@opentelemetry/api'
import {OTLPTraceExporter as GrpcTraceExporter} from '@opentelemetry/exporter-trace-otlp-grpc'
import {CompressionAlgorithm} from '@opentelemetry/otlp-exporter-base'
import {resourceFromAttributes} from '@opentelemetry/resources'
import {BatchSpanProcessor, TracerProvider} from '@opentelemetry/sdk-trace'
import {BIN, ROOT, runCli, startServe} from '../support/cli.js'
import {useTempDir} from '../support/hooks.js'

const KEY = 'cli-test-key-0123456789abcdef'
const READ_ONLY = 'cli-read-only-0123456789abcdef'

describe('serve options and server-side CLI commands', function () {
  this.timeout(90_000)
  const dir = useTempDir('suite')

  it('--api-keys guards the server; --api-key and AUDIT_TRAIL_API_KEY reach it; a bad key file stops it', async () => {
    const keys = path.join(dir, 'keys.txt')
    await writeFile(keys, `# keys\n${KEY}\n${READ_ONLY} read\n`)
    const server = await startServe(['--data-dir', path.join(dir, 'protected'), '--api-keys', keys])
    try {
      expect((await fetch(`${server.url}/v1/stats`)).status).to.equal(401)
      const noKey = await runCli(['stats', '--server', server.url])
      expect(noKey.code).to.equal(2)
      expect(noKey.stderr).to.match(/API key/)
      const withFlag = await runCli([
        'ingest',
        path.join(ROOT, 'examples', 'events.ndjson'),
        '--server',
        server.url,
        '--api-key',
        KEY,
      ])
      expect(withFlag.code, withFlag.stderr).to.equal(0)
      const withEnv = await runCli(['stats', '--json', '--server', server.url], {env: {AUDIT_TRAIL_API_KEY: READ_ONLY}})
      expect(withEnv.code, withEnv.stderr).to.equal(0)
      expect(JSON.parse(withEnv.stdout).total_events).to.equal(8)
      const forbidden = await runCli(['timestamp', '--server', server.url], {env: {AUDIT_TRAIL_API_KEY: READ_ONLY}})
      expect(forbidden.code).to.equal(2)
      expect(forbidden.stderr).to.match(/write scope/)
      expect(server.output()).not.to.contain(KEY)
    } finally {
      await server.stop()
    }
    await writeFile(keys, `${KEY}\ntoo-short\n`)
    const bad = await runCli(['serve', '--port', '0', '--data-dir', path.join(dir, 'protected'), '--api-keys', keys])
    expect(bad.code).to.equal(2)
    expect(bad.stderr).to.match(/line 2/)
  })

  it('--otlp-grpc-port serves OTLP/gRPC (gzip too) and implies --otlp; a port in use stops start-up', async () => {
    const server = await startServe(['--data-dir', path.join(dir, 'grpc'), '--otlp-grpc-port', '0'])
    try {
      const deadline = Date.now() + 10_000
      let match: RegExpExecArray | null = null
      // The gRPC port is printed on the line after the one startServe waits for.
      while (!(match = /OTLP\/gRPC: 127\.0\.0\.1:(\d+)/.exec(server.output())) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50))
      }
      const port = Number(match![1])
      const provider = new TracerProvider({
        resource: resourceFromAttributes({'service.name': 'grpc-svc'}),
        spanProcessors: [
          new BatchSpanProcessor({
            exporter: new GrpcTraceExporter({url: `http://127.0.0.1:${port}`, compression: CompressionAlgorithm.GZIP}),
          }),
        ],
      })
      const tracer = provider.getTracer('cli-test')
      const root = tracer.startSpan('invoke_agent courier', {
        attributes: {'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'courier'},
      })
      const tool = {attributes: {'gen_ai.operation.name': 'execute_tool'}}
      tracer.startSpan('execute_tool track', tool, trace.setSpan(ROOT_CONTEXT, root)).end()
      root.end()
      await provider.shutdown()
      const traceId = root.spanContext().traceId
      const run = await runCli(['events', 'list', '--server', server.url, '--trace-id', traceId, '--json'])
      expect(run.code, run.stderr).to.equal(0)
      expect(JSON.parse(run.stdout).map((e: any) => [e.agent_id, e.action_type])).to.deep.equal([
        ['courier', 'TOOL_CALL'],
        ['courier', 'AGENT_ACTION'],
      ])
      // The HTTP receivers are on too.
      const json = {'content-type': 'application/json'}
      const logs = await fetch(`${server.url}/v1/logs`, {method: 'POST', headers: json, body: '{}'})
      expect(logs.status).to.equal(200)
      const busyDir = path.join(dir, 'grpc-2')
      const busy = await runCli(['serve', '--port', '0', '--data-dir', busyDir, '--otlp-grpc-port', String(port)])
      expect(busy.code).to.equal(2)
      expect(busy.stderr).to.match(/^Error: cannot serve OTLP\/gRPC on 127\.0\.0\.1:\d+ .*another --otlp-grpc-port/)
    } finally {
      await server.stop()
    }
  })

  it(
    '--timestamp-every anchors the root when the tree has grown; timestamps list and verify show it; tail prints ' +
      'the stream',
    async () => {
      const dataDir = path.join(dir, 'anchored')
      const server = await startServe(['--data-dir', dataDir, '--timestamp-every', '1s'])
      // A second, human tail of one agent, live from the start: it stays until the server stops.
      const live = spawn(process.execPath, [BIN, 'tail', '--agent', 'billing-bot', '--server', server.url], {
        cwd: ROOT,
        env: {...process.env, NO_COLOR: '1'},
      })
      let liveOut = ''
      let liveErr = ''
      live.stdout.on('data', (d) => (liveOut += d))
      live.stderr.on('data', (d) => (liveErr += d))
      const liveExit = new Promise<number>((resolve) => live.on('exit', (code) => resolve(code ?? -1)))
      let billingIndexes: number[]
      try {
        const tail = spawn(process.execPath, [BIN, 'tail', '--json', '--from-index', '0', '--server', server.url], {
          cwd: ROOT,
        })
        let streamed = ''
        tail.stdout.on('data', (d) => (streamed += d))
        const connectBy = Date.now() + 10_000
        while (!liveOut.includes('connected') && Date.now() < connectBy) await new Promise((r) => setTimeout(r, 50))
        expect(
          (await runCli(['ingest', path.join(ROOT, 'examples', 'events.ndjson'), '--server', server.url])).code,
        ).to.equal(0)
        const deadline = Date.now() + 20_000
        let list: Array<{tree_size: number}> = []
        while (Date.now() < deadline) {
          list = (await (await fetch(`${server.url}/v1/timestamps`)).json()) as typeof list
          if (list.some((t) => t.tree_size === 8)) break
          await new Promise((r) => setTimeout(r, 250))
        }
        expect(list.map((t) => t.tree_size)).to.include(8)
        await new Promise((r) => setTimeout(r, 2500))
        const after = (await (await fetch(`${server.url}/v1/timestamps`)).json()) as typeof list
        expect(after.length, 'no new timestamp while the tree did not grow').to.equal(list.length)
        const cliList = await runCli(['timestamps', 'list', '--json', '--server', server.url])
        expect(JSON.parse(cliList.stdout).at(-1).tree_size).to.equal(8)
        const cliVerify = await runCli(['timestamps', 'verify', '--server', server.url])
        expect(cliVerify.code, cliVerify.stdout).to.equal(0)
        expect(cliVerify.stdout).to.match(/valid: root [0-9a-f]{64} \(tree size 8\)/)
        while (streamed.split('\n').filter((l) => l.includes('"type":"event"')).length < 8 && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 100))
        tail.kill('SIGINT')
        const lines = streamed
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
        expect(lines[0].type).to.equal('hello')
        expect(lines.filter((m) => m.type === 'event').map((m) => m.event.index)).to.deep.equal([
          0, 1, 2, 3, 4, 5, 6, 7,
        ])
        billingIndexes = lines
          .filter((m) => m.type === 'event' && m.event.agent_id === 'billing-bot')
          .map((m) => m.event.index)
      } finally {
        await server.stop()
      }
      // The server's shutdown closes the stream (1001): tail says so, and where to resume, and exits 0.
      expect(await liveExit).to.equal(0)
      expect(
        liveOut
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('#'))
          .map((l) => Number(l.slice(1, l.indexOf(' ')))),
      ).to.deep.equal(billingIndexes)
      expect(liveErr.trim()).to.equal(
        `stream closed by the server (1001 server shutting down); resume with --from-index ` +
          `${billingIndexes.at(-1)! + 1}`,
      )
      const offline = await runCli(['timestamps', 'verify', '--json', '--data-dir', dataDir])
      expect(JSON.parse(offline.stdout)).to.include({valid: true, consistent: true, current_root_matches: true})
    },
  )
})
