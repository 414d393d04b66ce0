import {readFile} from 'node:fs/promises'
import {Flags, type Interfaces} from '@oclif/core'
import {databaseUrlFlag, dataDirFlag, EXIT_USAGE, exitCodeOf, OneSentenceCommand} from '../cli/base.js'
import {problemText} from '../cli/output.js'
import {cannotRead, errorSentence, lockedSentence} from '../cli/next-step.js'
import {readPemFile} from '../cli/pem.js'
import {KeyFileError, parseKeyFile} from '../core/auth/keys.js'
import {parseDuration, parsePolicyText} from '../core/policy/index.js'
import {approverLine, logDecisions} from '../server/approval-log.js'
import {dashboardRoutes, isDashboardPath} from '../server/routes/dashboard.js'
import {ListenError} from '../server/server.js'
import {startService, type RunningService} from '../server/start.js'
import {StoreError} from '../store/index.js'
import {cosignatureVerifier} from '../core/checkpoint/index.js'
import type {WitnessTarget} from '../services/witness-client.js'
import {forwardFlags, forwardingOptions} from '../cli/forward-flags.js'
import {ForwardingError} from '../services/forwarding/index.js'

/** What the flags' files and values give the service, read before it starts. */
type StartOptions = Pick<
  Parameters<typeof startService>[0],
  'apiKeys' | 'tsa' | 'timestampEveryMs' | 'payloadRetentionMs' | 'defaultPolicy' | 'witnesses' | 'forwarding'
>

type ServeFlags = Interfaces.InferredFlags<(typeof Serve)['flags']>

export default class Serve extends OneSentenceCommand {
  static override description = 'Run the audit-trail HTTP service (REST API, WebSocket stream, optional OTLP receiver)'

  static override examples = [
    '<%= config.bin %> serve',
    '<%= config.bin %> serve --port 9000 --data-dir /var/lib/audit-trail --api-keys keys.txt',
    '<%= config.bin %> serve --otlp --timestamp-every 1h',
    '<%= config.bin %> serve --otlp-grpc-port 4317',
    '<%= config.bin %> serve --forward syslog+tls://siem.example:6514 --forward-ca siem-ca.pem',
  ]

  static override flags = {
    'data-dir': dataDirFlag,
    'database-url': databaseUrlFlag,
    host: Flags.string({description: 'address to listen on', env: 'AUDIT_TRAIL_HOST', default: '127.0.0.1'}),
    port: Flags.integer({
      description: 'port to listen on (0: any free port)',
      env: 'AUDIT_TRAIL_PORT',
      default: 8080,
      min: 0,
      max: 65535,
    }),
    'api-keys': Flags.string({
      description:
        'file of API keys (one per line, optional scopes read,write); every endpoint then needs Authorization: ' +
        'Bearer <key>',
    }),
    'tsa-url': Flags.string({
      description: 'external RFC 3161 timestamp authority (default: the embedded TSA)',
      dependsOn: ['tsa-ca'],
    }),
    'tsa-ca': Flags.string({description: 'PEM trust anchor(s) of the external TSA', dependsOn: ['tsa-url']}),
    otlp: Flags.boolean({
      description: 'accept OpenTelemetry traces and logs at POST /v1/traces and /v1/logs (OTLP/HTTP, JSON or protobuf)',
    }),
    'otlp-grpc-port': Flags.integer({
      description: 'also accept OTLP/gRPC traces and logs on this port of --host (usually 4317; implies --otlp)',
      min: 0,
      max: 65535,
    }),
    policy: Flags.string({
      description: 'default policy file (JSON or YAML) for POST /v1/policy/check requests that name no policies',
    }),
    origin: Flags.string({
      description:
        'checkpoint origin of this log: its URL without scheme, e.g. log.example.com/audit ' +
        '(set it once; default: derived from the log key)',
      env: 'AUDIT_TRAIL_ORIGIN',
    }),
    witness: Flags.string({
      description: 'C2SP tlog-witness URL prefix to submit each new checkpoint to (repeatable, one --witness-key each)',
      multiple: true,
      dependsOn: ['witness-key'],
    }),
    'witness-key': Flags.string({
      description: 'verifier key of the --witness at the same position (<name>+<id>+<base64>)',
      multiple: true,
      dependsOn: ['witness'],
    }),
    'timestamp-every': Flags.string({
      description: 'anchor the Merkle root this often when the tree has grown (30s, 15m, 1h, 7d)',
    }),
    'payload-retention': Flags.string({
      description:
        'erase the payload (input, output, metadata, error) of events recorded longer ago than this (e.g. 400d), ' +
        'checked hourly; hashes and proofs stay',
    }),
    ...forwardFlags,
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Serve)
    const options = await this.#readOptions(flags)
    const running = await this.#start(flags, options)
    await this.#announce(flags, running, options.apiKeys)
    this.#stopOnSignal(flags, running)
    await new Promise(() => {})
  }

  /** The flags' files and values, each read and checked before anything starts: a mistake is exit 2. */
  async #readOptions(flags: ServeFlags): Promise<StartOptions> {
    let apiKeys
    let tsa
    let timestampEveryMs
    let payloadRetentionMs
    let defaultPolicy
    let witnesses
    let forwarding
    // What is being read, for the one sentence should it fail: the flag, and what its file must hold.
    let reading = ''
    let expected = ''
    try {
      ;[reading, expected] = [`--policy ${flags.policy}`, 'a policy file, JSON or YAML (examples/policy.yaml)']
      if (flags.policy) defaultPolicy = parsePolicyText(await readFile(flags.policy, 'utf8'))
      ;[reading, expected] = [`--api-keys ${flags['api-keys']}`, 'a file of API keys, one a line (docs/security.md)']
      if (flags['api-keys']) apiKeys = parseKeyFile(await readFile(flags['api-keys'], 'utf8'), flags['api-keys'])
      ;[reading, expected] = [`--tsa-ca ${flags['tsa-ca']}`, "the PEM file of the TSA's CA certificate(s)"]
      if (flags['tsa-url']) tsa = {url: flags['tsa-url'], caPem: await readPemFile(flags['tsa-ca']!)}
      reading = `--timestamp-every ${flags['timestamp-every']}`
      if (flags['timestamp-every']) timestampEveryMs = parseDuration(flags['timestamp-every'])
      reading = `--payload-retention ${flags['payload-retention']}`
      if (flags['payload-retention']) payloadRetentionMs = parseDuration(flags['payload-retention'])
      reading = '--witness and --witness-key'
      if (flags.witness) witnesses = pairWitnesses(flags.witness, flags['witness-key'] ?? [])
      forwarding = await forwardingOptions(flags)
    } catch (error) {
      if (error instanceof KeyFileError || error instanceof ForwardingError) this.failUsage(error.message)
      const file = reading.slice(reading.indexOf(' ') + 1)
      const problem = (error as NodeJS.ErrnoException).syscall ? cannotRead(file, error, expected) : problemText(error)
      this.failUsage(`cannot use ${reading}: ${problem}`)
    }
    return {apiKeys, tsa, timestampEveryMs, payloadRetentionMs, defaultPolicy, witnesses, forwarding}
  }

  /** Opens the store and listens; what stops it is one sentence with the exit code every command gives. */
  async #start(flags: ServeFlags, options: StartOptions): Promise<RunningService> {
    try {
      const otlpGrpcPort = flags['otlp-grpc-port']
      return await startService({
        dataDir: flags['data-dir'],
        databaseUrl: flags['database-url'],
        host: flags.host,
        port: flags.port,
        ...options,
        otlpGrpcPort,
        origin: flags.origin,
        app: {
          otlp: flags.otlp || otlpGrpcPort !== undefined,
          extraRouters: [dashboardRoutes()],
          isPublic: isDashboardPath,
        },
      })
    } catch (error) {
      // Another process owns the data directory: exit 3 (exitCodeOf), like every command.
      if (error instanceof StoreError && error.reason === 'locked') {
        // docs/security.md, "One owner per data directory": the owner named; and --server URL
        // suggested, since the CLI talks to a running serve.
        const remedy =
          'stop it, or talk to it with --server URL rather than serving it twice (several serve processes ' +
          'share one log on PostgreSQL: --database-url, docs/postgres.md)'
        this.fail(lockedSentence(error, remedy), exitCodeOf(error))
      }
      // What stopped the store from opening is said as by every command (exitCodeOf): a database
      // that cannot be reached is 3, a wrong URL or data directory 2.
      if (error instanceof StoreError) this.fail(errorSentence(error, {given: () => false}), exitCodeOf(error))
      if (error instanceof ListenError) this.failUsage(error.message)
      // A fault of this program is not the user's input: oclif reports it (exit 1).
      if (error instanceof TypeError || error instanceof ReferenceError) throw error
      // Anything else that stops start-up after the data directory opened (openAudit says what
      // stops the opening) comes from its files too: the embedded TSA's, one that cannot be
      // written (README: an unreadable or invalid file is exit 2).
      this.failUsage(`cannot start on the data directory ${flags['data-dir']}: ${problemText(error)}`)
    }
  }

  /** Where the service listens and what it serves, a line each, for the operator who started it. */
  async #announce(flags: ServeFlags, running: RunningService, apiKeys: StartOptions['apiKeys']): Promise<void> {
    const where =
      flags['database-url'] === undefined ? `data directory ${running.services.dataDir}` : 'PostgreSQL database'
    this.log(`audit-trail listening on ${running.url} (${where}${apiKeys ? `, ${apiKeys.length} API keys` : ''})`)
    if (running.otlpGrpcPort !== undefined) this.log(`OTLP/gRPC: ${flags.host}:${running.otlpGrpcPort}`)
    this.log(`dashboard: ${running.url}/`)
    const approvers = apiKeys && approverLine(apiKeys)
    if (approvers) this.log(approvers)
    logDecisions(running.services.feed, (line) => this.log(line))
    const identity = await running.services.checkpoints.identity()
    const reminder =
      identity.originFrom === 'default' ? " (default origin: set --origin to the log's URL without scheme)" : ''
    this.log(`log key: ${identity.verifierKey}${reminder}`)
    const trails = await running.trails.names()
    if (trails.length > 1) this.log(`trails: ${trails.join(', ')} (under /v1/trails/NAME/ and /tlog/NAME/)`)
    for (const {destination} of running.forwarding.forwarders) this.log(`forwarding to ${destination.url}`)
  }

  /** SIGINT or SIGTERM: finish the requests in flight, close the store, exit 0. */
  #stopOnSignal(flags: ServeFlags, running: RunningService): void {
    let stopping = false
    const stop = async (signal: string) => {
      if (stopping) return
      stopping = true
      // A database store has no snapshot: every commit is durable where it was made.
      const snapshot = flags['database-url'] === undefined ? ' and writing a snapshot' : ''
      this.log(`audit-trail: ${signal} received, finishing requests${snapshot}`)
      await running.close()
      process.exit(0)
    }
    process.on('SIGINT', () => void stop('SIGINT'))
    process.on('SIGTERM', () => void stop('SIGTERM'))
  }

  private failUsage(message: string): never {
    return this.fail(message, EXIT_USAGE)
  }

  private fail(message: string, exitCode: number): never {
    process.stderr.write(`Error: ${message}\n`)
    return this.exit(exitCode)
  }
}

/** --witness URL and --witness-key VKEY pair up in the order given. */
function pairWitnesses(urls: string[], keys: string[]): WitnessTarget[] {
  if (urls.length !== keys.length) {
    throw new Error(`${urls.length} --witness but ${keys.length} --witness-key: give one key per witness`)
  }
  return urls.map((url, i) => {
    if (!/^https?:\/\//.test(url)) throw new Error(`--witness ${url} is not an http(s) URL`)
    cosignatureVerifier(keys[i]!)
    return {url, verifierKey: keys[i]!}
  })
}
