/**
 * Every error a CLI command can end with, one row each (README.md, "Exit codes"): the exit code of
 * its kind, one sentence (on stderr; a failed check's verdict leads stdout), the flags it names
 * written with their dashes, and what to do next.
 */
import {execFileSync} from 'node:child_process'
import {mkdir, readdir, readFile, rm, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {acquireLock, type DirectoryLock} from '../../src/store/sqljs/lock.js'
import {ROOT, runCli, spawnCli} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {createTestDatabase, postgresAvailable} from '../support/stores.js'
import {answering, apiError, closedPort} from '../support/stub-server.js'

const SAMPLE = path.join(ROOT, 'examples', 'events.ndjson')
const POLICY = path.join(ROOT, 'examples', 'policy.yaml')

/** Flag names a sentence must never use bare: hyphenated, so they are never an ordinary word. */
const FLAG_WORDS = [
  'data-dir',
  'database-url',
  'api-key',
  'api-keys',
  'tsa-url',
  'tsa-ca',
  'log-key',
  'witness-key',
  'min-witnesses',
  'from-index',
  'action-type',
  'trace-id',
  'session-id',
  'timestamp-every',
  'otlp-grpc-port',
]

/** The README's exit codes, by what happened. */
const FAILED = 1
const USAGE = 2
const UNAVAILABLE = 3

interface Fixture {
  dir: string
  /** A data directory with the sample events, a timestamp and a log key. */
  data: string
  /** One event, never timestamped. */
  unstamped: string
  /** Timestamped, then an event changed in events.sqlite while nothing ran. */
  tampered: string
  /** Locked by this test process for the whole run. */
  locked: string
  pkg: string
  tamperedPkg: string
  violated: string
  ca: string
  closed: number
  servers: Record<'s401' | 's403' | 's404' | 's500' | 'notJson' | 's502', string>
  /** Timestamped by its embedded TSA, whose `tsa/` was then lost. */
  lostTsa: string
  /** A database that holds events, one that holds another log's key, an empty one (PostgreSQL rows only). */
  database?: {used: string; otherKey: string; empty: string}
}

interface Row {
  name: string
  argv: (f: Fixture) => string[]
  exit: typeof FAILED | typeof USAGE | typeof UNAVAILABLE
  /** The sentence. */
  said: RegExp
  /** What to do next, in the same sentence. */
  next: RegExp
  /** Flags the sentence names, each as typed. */
  flags?: string[]
  /** Where the sentence is: stderr (an error), or the first line of stdout (a failed check's verdict). */
  on?: 'stderr' | 'stdout'
  input?: string
  postgres?: boolean
  /** Run as a process of its own: the lock this test process holds is another process's lock to it. */
  spawn?: boolean
}

const SEE_HELP = /\(see --help\)$/

const ROWS: Row[] = [
  // 2: usage errors found by parsing the command line.
  {
    name: 'a missing required flag',
    argv: () => ['timestamps', 'reset'],
    exit: USAGE,
    said: /^Missing required flag --reason/,
    next: SEE_HELP,
    flags: ['--reason'],
  },
  {
    name: 'migrate without --database-url',
    argv: () => ['migrate'],
    exit: USAGE,
    said: /^Missing required flag --database-url/,
    next: SEE_HELP,
    flags: ['--database-url'],
  },
  {
    name: 'a mistyped flag',
    argv: () => ['events', 'list', '--sever', 'x'],
    exit: USAGE,
    said: /^Nonexistent flag: --sever/,
    next: /did you mean --server\? \(see --help\)$/,
  },
  {
    name: 'a flag value of the wrong type',
    argv: () => ['serve', '--port', 'abc'],
    exit: USAGE,
    said: /^Parsing --port Expected an integer/,
    next: SEE_HELP,
  },
  {
    name: 'a flag without the flag it needs',
    argv: () => ['timestamp', '--tsa-url', 'http://127.0.0.1:9'],
    exit: USAGE,
    said: /--tsa-ca/,
    next: SEE_HELP,
  },
  {
    name: 'a value not among the options',
    argv: (f) => ['policy', 'check', '--policy', POLICY, '--format', 'xml', '--data-dir', f.data],
    exit: USAGE,
    said: /^Expected --format=xml to be one of: text, json, junit/,
    next: SEE_HELP,
  },
  {
    name: 'a missing argument',
    argv: () => ['events', 'get'],
    exit: USAGE,
    said: /^Missing 1 required arg: id/,
    next: SEE_HELP,
  },
  {
    name: '--json of witness serve (a server, as serve: README)',
    argv: () => ['witness', 'serve', '--log', 'x=y', '--json'],
    exit: USAGE,
    said: /^Nonexistent flag: --json/,
    next: SEE_HELP,
  },
  {
    name: 'an unknown command',
    argv: () => ['timestamps', 'verfy'],
    exit: USAGE,
    said: /has no command "verfy"/,
    next: /did you mean "timestamps verify"\?/,
  },
  {
    name: '--data-dir and --server both',
    argv: (f) => ['stats', '--data-dir', f.data, '--server', 'http://127.0.0.1:9'],
    exit: USAGE,
    said: /^give either --data-dir or --server, not both$/,
    next: /give either/,
  },
  {
    name: 'a flag a server does not take',
    argv: () => ['timestamps', 'verify', '--tsa-ca', 'ca.pem', '--server', 'http://127.0.0.1:9'],
    exit: USAGE,
    said: /^--tsa-ca cannot be used with --server/,
    next: /a server checks against its own configuration/,
  },
  {
    name: '--format beside --json',
    argv: (f) => ['policy', 'check', '--policy', POLICY, '--json', '--format', 'junit', '--data-dir', f.data],
    exit: USAGE,
    said: /^--format junit cannot be used with --json/,
    next: /which prints the JSON report/,
  },

  // 2: input errors: values, files and names that do not fit.
  {
    name: 'a time filter that is no time',
    argv: (f) => ['events', 'list', '--since', 'yesterday', '--data-dir', f.data],
    exit: USAGE,
    said: /^--since must be an ISO 8601 time/,
    next: /for example 2026-11-21T22:45:00Z/,
    flags: ['--since'],
  },
  {
    name: 'a page size out of range',
    argv: (f) => ['events', 'list', '--limit', '5000', '--data-dir', f.data],
    exit: USAGE,
    said: /^--limit must be an integer from 1 to 1000/,
    next: /from 1 to 1000/,
    flags: ['--limit'],
  },
  {
    name: 'an export filter that is no time',
    argv: (f) => ['export', '--until', 'soon', '-o', '-', '--data-dir', f.data],
    exit: USAGE,
    said: /^--until must be an ISO 8601 time/,
    next: /for example/,
    flags: ['--until'],
  },
  {
    name: 'a policy scope that is no time',
    argv: (f) => ['policy', 'check', '--policy', POLICY, '--since', 'x', '--data-dir', f.data],
    exit: USAGE,
    said: /--since must be an ISO 8601 time/,
    next: /for example/,
    flags: ['--since'],
  },
  {
    name: 'a label without a value',
    argv: (f) => ['events', 'list', '--label', 'env', '--data-dir', f.data],
    exit: USAGE,
    said: /^--label env: expected key=value$/,
    next: /key=value/,
    flags: ['--label'],
  },
  {
    name: 'a blank search',
    argv: (f) => ['search', '  ', '--data-dir', f.data],
    exit: USAGE,
    said: /^the search query is blank/,
    next: /give one or more terms/,
  },
  {
    name: 'a blank reset reason',
    argv: (f) => ['timestamps', 'reset', '--reason', ' ', '--data-dir', f.data],
    exit: USAGE,
    said: /^a reset needs a reason/,
    next: /one line of 1 to 1000 characters/,
    flags: ['--reason'],
  },
  {
    name: 'an unknown event',
    argv: (f) => ['events', 'get', 'nope', '--data-dir', f.data],
    exit: USAGE,
    said: /^no event with id nope/,
    next: /`audit-trail events list` lists the stored events/,
  },
  {
    name: 'an unknown agent',
    argv: (f) => ['verify', '--agent', 'nobody', '--data-dir', f.data],
    exit: USAGE,
    said: /^no events for agent nobody/,
    next: /`audit-trail agents` lists the agents/,
  },
  {
    name: 'a reset while history is intact',
    argv: (f) => ['timestamps', 'reset', '--reason', 'restored', '--data-dir', f.data],
    exit: USAGE,
    said: /^signed history is intact/,
    next: /nothing to start over/,
  },
  {
    name: 'a data directory that does not exist',
    argv: (f) => ['stats', '--data-dir', path.join(f.dir, 'nowhere')],
    exit: USAGE,
    said: /^no data directory at /,
    next: /give --server URL$/,
    flags: ['--server'],
  },
  {
    name: 'a data directory that is a file',
    argv: () => ['stats', '--data-dir', SAMPLE],
    exit: USAGE,
    said: /is not a directory/,
    next: /give --data-dir a directory$/,
    flags: ['--data-dir'],
  },
  {
    name: 'migrate from a data directory that does not exist',
    argv: (f) => ['migrate', '--data-dir', path.join(f.dir, 'nowhere'), '--database-url', 'postgres://127.0.0.1:9/x'],
    exit: USAGE,
    said: /^no data directory at /,
    next: /give --data-dir the data directory to copy$/,
    flags: ['--data-dir'],
  },
  {
    name: 'an events file that does not exist',
    argv: (f) => ['ingest', path.join(f.dir, 'nope.ndjson'), '--data-dir', f.data],
    exit: USAGE,
    said: /^cannot read .*nope\.ndjson \(no such file\)/,
    next: /give the path of a file of events/,
  },
  {
    name: 'input that is no JSON',
    argv: (f) => ['ingest', '-', '--data-dir', f.data],
    input: '[1, 2',
    exit: USAGE,
    said: /^cannot read -: /,
    next: /give a JSON array, a single JSON object or NDJSON/,
  },
  {
    name: 'events the log refuses',
    argv: (f) => ['ingest', '-', '--data-dir', f.data],
    input: '{"agent_id": "a"}\n',
    exit: USAGE,
    said: /^1 of 1 event rejected/,
    next: /correct the rejected events and ingest only them again$/,
  },
  {
    name: 'a package that does not exist',
    argv: (f) => ['verify', '--package', path.join(f.dir, 'nope.atrail.json')],
    exit: USAGE,
    said: /^cannot read .*nope\.atrail\.json \(no such file\)/,
    next: /`audit-trail export` writes one/,
  },
  {
    name: 'a package that is no JSON',
    argv: () => ['verify', '--package', SAMPLE],
    exit: USAGE,
    said: /is not JSON/,
    next: /line \d+, column \d+/,
  },
  {
    name: 'a malformed log key',
    argv: (f) => ['verify', '--package', f.pkg, '--log-key', 'nonsense'],
    exit: USAGE,
    said: /^cannot use --log-key: /,
    next: /give the key `audit-trail keys log` prints/,
    flags: ['--log-key'],
  },
  {
    name: 'a trust anchor file that does not exist',
    argv: (f) => ['timestamps', 'verify', '--tsa-ca', path.join(f.dir, 'nope.pem'), '--data-dir', f.data],
    exit: USAGE,
    said: /^cannot use --tsa-ca .*nope\.pem/,
    next: /give the path of the PEM file of the TSA's CA certificate/,
    flags: ['--tsa-ca'],
  },
  {
    name: 'a trust anchor file with no certificate',
    argv: (f) => ['verify', '--package', f.pkg, '--tsa-ca', SAMPLE],
    exit: USAGE,
    said: /^cannot use --tsa-ca .*: no PEM certificate found/,
    next: /give the PEM file of the TSA's CA certificate/,
    flags: ['--tsa-ca'],
  },
  {
    name: 'a policy file that does not exist',
    argv: (f) => ['policy', 'check', '--policy', path.join(f.dir, 'nope.yaml'), '--data-dir', f.data],
    exit: USAGE,
    said: /^cannot read .*nope\.yaml \(no such file\)/,
    next: /examples\/policy\.yaml shows one/,
  },
  {
    name: 'a policy file with an unknown rule type',
    argv: (f) => ['policy', 'check', '--policy', path.join(f.dir, 'unknown-rule.yaml'), '--data-dir', f.data],
    exit: USAGE,
    said: /^invalid policy file .*: policy rule "x"/,
    next: /must be one of chain_integrity/,
  },
  {
    name: 'an export to a directory that does not exist',
    argv: (f) => ['export', '-o', path.join(f.dir, 'no', 'such', 'x.atrail.json'), '--data-dir', f.data],
    exit: USAGE,
    said: /^cannot write .*: no such directory/,
    next: /give -o a file in a directory you may write/,
  },
  {
    name: 'an origin that cannot name a key',
    argv: (f) => ['keys', 'log', '--origin', 'not an origin', '--data-dir', f.data],
    exit: USAGE,
    said: /^invalid origin "not an origin"/,
    next: /give --origin the log's URL without scheme/,
    flags: ['--origin'],
  },
  {
    name: 'a tail URL that is not http',
    argv: () => ['tail', '--server', 'ftp://127.0.0.1:8080'],
    exit: USAGE,
    said: /^--server ftp:\/\/127\.0\.0\.1:8080 is not an http/,
    next: /give the URL serve prints/,
    flags: ['--server'],
  },
  {
    name: 'a database URL that is not PostgreSQL',
    argv: () => ['stats', '--database-url', 'mysql://127.0.0.1/x'],
    exit: USAGE,
    said: /is not a PostgreSQL URL/,
    next: /\(postgres:\/\/user:password@host:port\/database\)/,
  },

  // 2: a request the server refused.
  {
    name: 'a server that needs a key',
    argv: (f) => ['stats', '--server', f.servers.s401],
    exit: USAGE,
    said: /needs an API key/,
    next: /give it with --api-key KEY or the environment variable AUDIT_TRAIL_API_KEY$/,
    flags: ['--api-key'],
  },
  {
    name: 'a stream that needs a key',
    argv: (f) => ['tail', '--server', f.servers.s401],
    exit: USAGE,
    said: /needs an API key/,
    next: /give it with --api-key KEY or the environment variable AUDIT_TRAIL_API_KEY$/,
    flags: ['--api-key'],
  },
  {
    name: 'a stream that refuses the key given',
    argv: (f) => ['tail', '--server', f.servers.s401, '--api-key', 'k'.repeat(20)],
    exit: USAGE,
    said: /refused the API key given with --api-key/,
    next: /AUDIT_TRAIL_API_KEY/,
    flags: ['--api-key'],
  },
  {
    name: 'a key that lacks the scope',
    argv: (f) => ['stats', '--server', f.servers.s403],
    exit: USAGE,
    said: /^the API key lacks the read scope/,
    next: /give a key with that scope \(--api-key/,
    flags: ['--api-key'],
  },
  {
    name: 'an unknown event on a server',
    argv: (f) => ['events', 'get', 'nope', '--server', f.servers.s404],
    exit: USAGE,
    said: /^no event with id nope/,
    next: /`audit-trail events list`/,
  },

  // 1: a check that failed (README: verification failed, policy violated).
  {
    name: 'no timestamp to verify',
    argv: (f) => ['timestamps', 'verify', '--data-dir', f.unstamped],
    exit: FAILED,
    on: 'stdout',
    said: /^NOT ANCHORED: no timestamp has been issued yet/,
    next: /anchor the current root with `audit-trail timestamp`$/,
  },
  {
    name: 'a tampered package',
    argv: (f) => ['verify', '--package', f.tamperedPkg],
    exit: FAILED,
    on: 'stdout',
    said: /^INVALID/,
    next: /event|hash/,
  },
  {
    name: 'a violated policy',
    argv: (f) => ['policy', 'check', '--policy', f.violated, '--data-dir', f.data],
    exit: FAILED,
    on: 'stdout',
    said: /FAIL|violat/i,
    next: /no-tools/,
  },
  {
    name: 'a timestamp over rewritten history',
    argv: (f) => ['timestamp', '--data-dir', f.tampered],
    exit: FAILED,
    said: /^refusing to sign the tree of 8 events: history was rewritten/,
    next: /audit-trail timestamps reset --reason/,
    flags: ['--reason'],
  },
  {
    name: 'chains that do not verify',
    argv: (f) => ['verify', '--data-dir', f.tampered],
    exit: FAILED,
    on: 'stdout',
    said: /^INVALID/,
    next: /hash_mismatch|sequence/,
  },

  // 3: could not check: a server, a TSA or a database that cannot be used, a locked directory.
  {
    name: 'a server that cannot be reached',
    argv: (f) => ['stats', '--server', `http://127.0.0.1:${f.closed}`],
    exit: UNAVAILABLE,
    said: /^cannot reach the server at /,
    next: /check that it runs and that --server \(or AUDIT_TRAIL_SERVER\) gives its URL$/,
    flags: ['--server'],
  },
  {
    name: 'a stream that cannot be reached',
    argv: (f) => ['tail', '--server', `http://127.0.0.1:${f.closed}`],
    exit: UNAVAILABLE,
    said: /^cannot reach the stream at /,
    next: /check that the server runs/,
    flags: ['--server'],
  },
  {
    name: 'a server failing',
    argv: (f) => ['stats', '--server', f.servers.s500],
    exit: UNAVAILABLE,
    said: /^the journal failed/,
    next: /try again later; its log says why\)$/,
  },
  {
    name: 'a server that does not answer JSON',
    argv: (f) => ['stats', '--server', f.servers.notJson],
    exit: UNAVAILABLE,
    said: /with a body that is not JSON/,
    next: /check that --server gives the URL of an audit-trail server$/,
    flags: ['--server'],
  },
  {
    name: "a server's TSA failing",
    argv: (f) => ['timestamp', '--server', f.servers.s502],
    exit: UNAVAILABLE,
    said: /^the TSA did not answer/,
    next: /try again when the TSA answers/,
  },
  {
    name: 'a TSA that cannot be reached',
    argv: (f) => [
      'timestamp',
      '--tsa-url',
      `http://127.0.0.1:${f.closed}/tsr`,
      '--tsa-ca',
      f.ca,
      '--data-dir',
      f.unstamped,
    ],
    exit: UNAVAILABLE,
    said: /unreachable/,
    next: /try again when the TSA answers, or give another with --tsa-url and --tsa-ca$/,
    flags: ['--tsa-url', '--tsa-ca'],
  },
  {
    name: 'a PostgreSQL server that cannot be reached',
    argv: (f) => ['stats', '--database-url', `postgres://postgres@127.0.0.1:${f.closed}/x`],
    exit: UNAVAILABLE,
    said: /^cannot use the database .*ECONNREFUSED/,
    next: /check that PostgreSQL runs there and that --database-url/,
    flags: ['--database-url'],
  },
  {
    name: 'a locked data directory',
    spawn: true,
    argv: (f) => ['stats', '--data-dir', f.locked],
    exit: UNAVAILABLE,
    said: /is in use by process \d+/,
    next: /stop it or talk to it with --server URL$/,
    flags: ['--server'],
  },
  {
    name: 'migrate from a locked data directory',
    spawn: true,
    argv: (f) => ['migrate', '--data-dir', f.locked, '--database-url', `postgres://127.0.0.1:${f.closed}/x`],
    exit: UNAVAILABLE,
    said: /is in use by process \d+/,
    next: /stop it \(serve included\) and run migrate again: unlike the commands that talk to it with --server URL/,
  },
  {
    name: 'serve on a locked data directory',
    spawn: true,
    argv: (f) => ['serve', '--port', '0', '--data-dir', f.locked],
    exit: UNAVAILABLE,
    said: /is in use by process \d+/,
    next: /stop it, or talk to it with --server URL rather than serving it twice/,
    flags: ['--server', '--database-url'],
  },

  // serve and witness serve: what stops them starting.
  {
    name: 'serve with an API key file that does not exist',
    argv: (f) => ['serve', '--port', '0', '--data-dir', f.data, '--api-keys', path.join(f.dir, 'nope.txt')],
    exit: USAGE,
    said: /^cannot use --api-keys .*nope\.txt: cannot read/,
    next: /give the path of a file of API keys/,
    flags: ['--api-keys'],
  },
  {
    name: 'serve on a port in use',
    argv: (f) => ['serve', '--data-dir', f.data, '--port', new URL(f.servers.s401).port],
    exit: USAGE,
    said: /is already in use/,
    next: /choose another with --port$/,
    flags: ['--port'],
  },
  {
    name: 'serve with a witness and no key',
    argv: (f) => ['serve', '--port', '0', '--data-dir', f.data, '--witness', 'http://127.0.0.1:9'],
    exit: USAGE,
    said: /--witness-key/,
    next: SEE_HELP,
    flags: ['--witness-key'],
  },
  {
    name: 'serve on a PostgreSQL server that cannot be reached',
    argv: (f) => ['serve', '--port', '0', '--database-url', `postgres://postgres@127.0.0.1:${f.closed}/x`],
    exit: UNAVAILABLE,
    said: /^cannot use the database/,
    next: /check that PostgreSQL runs there/,
    flags: ['--database-url'],
  },
  {
    name: 'a witness given a log without a key',
    argv: () => ['witness', 'serve', '--port', '0', '--log', 'nonsense'],
    exit: USAGE,
    said: /--log nonsense is not ORIGIN=VERIFIER_KEY/,
    next: /give --log ORIGIN=KEY with the key `audit-trail keys log` prints/,
    flags: ['--log'],
  },
  {
    name: 'a witness given a malformed key',
    argv: () => ['witness', 'serve', '--port', '0', '--log', 'log.example/a=nonsense'],
    exit: USAGE,
    said: /--log log\.example\/a: /,
    next: /give --log ORIGIN=KEY/,
    flags: ['--log'],
  },

  // PostgreSQL: migrate into a database that is not the log's to take.
  {
    name: 'migrate into a database that holds events',
    argv: (f) => ['migrate', '--data-dir', f.data, '--database-url', f.database!.used],
    exit: USAGE,
    said: /^the database already holds 8 events: migrate copies into an empty database only/,
    next: /create a new one \(createdb\) and give its URL with --database-url$/,
    flags: ['--database-url'],
    postgres: true,
  },
  {
    name: 'migrate a log whose TSA was lost',
    argv: (f) => ['migrate', '--data-dir', f.lostTsa, '--database-url', f.database!.empty],
    exit: FAILED,
    said: /^the copy does not prove equal to the data directory: a latest timestamp that does not verify/,
    next: /drop the database \(dropdb\), fix the cause and migrate again$/,
    postgres: true,
  },
  {
    name: "migrate into a database that holds another log's key",
    argv: (f) => ['migrate', '--data-dir', f.data, '--database-url', f.database!.otherKey],
    exit: USAGE,
    said: /^the database already holds another log key than the data directory's/,
    next: /migrate into a new database \(createdb\) and give its URL with --database-url$/,
    flags: ['--database-url'],
    postgres: true,
  },
]

async function cli(argv: string[], input?: string): Promise<void> {
  const result = await runCli(argv, {input})
  expect(result.code, `${argv.join(' ')}: ${result.stderr}`).to.equal(0)
}

describe('every error a CLI command ends with: exit code, flags with dashes, what to do next', function () {
  this.timeout(600_000)
  const f = {} as Fixture
  const cleanUp: Array<() => Promise<void>> = []
  let lock: DirectoryLock | undefined

  before(async () => {
    f.dir = await tempDir()
    ;[f.data, f.unstamped, f.tampered, f.locked, f.lostTsa] = ['data', 'unstamped', 'tampered', 'locked', 'lost'].map(
      (name) => path.join(f.dir, name),
    )
    f.pkg = path.join(f.dir, 'evidence.atrail.json')
    f.tamperedPkg = path.join(f.dir, 'tampered.atrail.json')
    f.violated = path.join(f.dir, 'violated.json')
    f.ca = path.join(f.data, 'tsa', 'ca.pem')
    await Promise.all([
      (async () => {
        await cli(['ingest', SAMPLE, '--data-dir', f.data])
        await cli(['timestamp', '--data-dir', f.data])
        await cli(['keys', 'log', '--data-dir', f.data])
        await cli(['export', '-o', f.pkg, '--data-dir', f.data])
      })(),
      (async () => {
        await cli(['ingest', SAMPLE, '--data-dir', f.tampered])
        await cli(['timestamp', '--data-dir', f.tampered])
        // Rewritten while nothing ran: the journal folded into events.sqlite, then a row changed.
        for (const file of await readdir(f.tampered))
          if (file.startsWith('journal')) await rm(path.join(f.tampered, file), {recursive: true})
        execFileSync('sqlite3', [
          path.join(f.tampered, 'events.sqlite'),
          `update events set action_name = 'tampered' where "index" = 0`,
        ])
      })(),
      cli(['ingest', '-', '--data-dir', f.unstamped], '{"agent_id":"a","action_type":"T","action_name":"x"}'),
      cli(['ingest', '-', '--data-dir', f.locked], '{"agent_id":"a","action_type":"T","action_name":"x"}'),
      (async () => {
        await cli(['ingest', '-', '--data-dir', f.lostTsa], '{"agent_id":"a","action_type":"T","action_name":"x"}')
        await cli(['timestamp', '--data-dir', f.lostTsa])
        await rm(path.join(f.lostTsa, 'tsa'), {recursive: true})
      })(),
    ])
    lock = acquireLock(f.locked)
    const pkg = JSON.parse(await readFile(f.pkg, 'utf8'))
    pkg.events[1].action_name = 'edited'
    await writeFile(f.tamperedPkg, JSON.stringify(pkg))
    const rule = {name: 'no-tools', type: 'forbidden_action', match: {action_type: 'TOOL_CALL'}}
    await writeFile(f.violated, JSON.stringify({policies: [rule]}))
    await writeFile(path.join(f.dir, 'unknown-rule.yaml'), 'policies: [{name: x, type: nope}]\n')
    f.closed = await closedPort()
    const servers = {
      s401: await answering(401, apiError('unauthorized', 'a valid API key is required')),
      s403: await answering(403, apiError('forbidden', 'the API key lacks the read scope')),
      s404: await answering(404, apiError('not_found', 'no event with id nope')),
      s500: await answering(503, apiError('storage_unavailable', 'the journal failed')),
      notJson: await answering(500, 'Internal Server Error'),
      s502: await answering(502, apiError('tsa_unavailable', 'the TSA did not answer')),
    }
    for (const server of Object.values(servers)) cleanUp.push(() => server.close())
    f.servers = Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, s.url])) as Fixture['servers']
    if (await postgresAvailable()) {
      const [used, otherKey, empty] = [
        await createTestDatabase(),
        await createTestDatabase(),
        await createTestDatabase(),
      ]
      cleanUp.push(used.drop, otherKey.drop, empty.drop)
      await cli(['ingest', SAMPLE, '--database-url', used.url])
      await cli(['keys', 'log', '--database-url', otherKey.url])
      f.database = {used: used.url, otherKey: otherKey.url, empty: empty.url}
    }
    await mkdir(path.join(f.dir, 'empty'))
  })

  after(async () => {
    lock?.release()
    await Promise.all(cleanUp.map((close) => close()))
    await removeDir(f.dir)
  })

  for (const row of ROWS) {
    it(`${row.exit}: ${row.name}`, async function () {
      if (row.postgres && f.database === undefined) this.skip()
      const argv = row.argv(f)
      const result = await (row.spawn ? spawnCli : runCli)(argv, {input: row.input, cwd: path.join(f.dir, 'empty')})
      const where = `${argv.join(' ')}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`
      expect(result.code, where).to.equal(row.exit)
      let sentence: string
      if (row.on === 'stdout') {
        sentence = result.stdout.split('\n')[0]!
      } else {
        expect(result.stderr.trimEnd().split('\n'), where).to.have.length(1)
        expect(result.stderr, where).to.match(/^Error: /)
        sentence = result.stderr.trimEnd().slice('Error: '.length)
      }
      expect(sentence, where).to.match(row.said)
      expect(sentence, where).to.match(row.next)
      for (const flag of row.flags ?? []) expect(sentence, where).to.include(flag)
      for (const word of FLAG_WORDS)
        expect(sentence, `${word} without its dashes: ${sentence}`).to.not.match(new RegExp(`(^|[^-])\\b${word}\\b`))
      expect(sentence, `a flag named without its dashes: ${sentence}`).to.not.match(/\bflags? [a-z]/)
    })
  }
})
