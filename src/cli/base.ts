/**
 * The base of every data command: the flags that pick what it talks to (`--data-dir` or
 * `--server URL`), `--json` from oclif, and the one place where errors become exit codes
 * (README.md, "Exit codes": 2 for usage and input errors, 3 when the check could not be made, with
 * one sentence on stderr).
 */
import {Command, Flags, type Interfaces} from '@oclif/core'
import {AuditError, type ErrorCode} from '../core/errors.js'
import {HttpClient, LocalClient, type AuditClient} from './client.js'
import {errorSentence} from './next-step.js'
import {withApiKeyHint, withFlagHint} from './output.js'
import {parseServerUrl} from './server-url.js'

// The shapes of parse's generics (oclif does not export them by name), `any` as oclif declares them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type FlagOutput = {[name: string]: any}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ArgOutput = {[name: string]: any}

export const EXIT_FAILED = 1
export const EXIT_USAGE = 2
export const EXIT_UNAVAILABLE = 3

/**
 * The exit code of each error code (README.md, "Exit codes"): what the user asked wrongly is 2; the
 * service failing is 3, could not check or record, whatever the input (a full store included: the
 * events were valid, and the same command succeeds once there is room).
 */
const EXIT_CODES: Readonly<Record<ErrorCode, number>> = {
  invalid_json: EXIT_USAGE,
  validation_error: EXIT_USAGE,
  invalid_signature: EXIT_USAGE,
  unauthorized: EXIT_USAGE,
  forbidden: EXIT_USAGE,
  not_found: EXIT_USAGE,
  conflict: EXIT_USAGE,
  trail_not_found: EXIT_USAGE,
  trail_sealed: EXIT_USAGE,
  payload_too_large: EXIT_USAGE,
  unsupported_media_type: EXIT_USAGE,
  tsa_unavailable: EXIT_UNAVAILABLE,
  storage_full: EXIT_UNAVAILABLE,
  storage_unavailable: EXIT_UNAVAILABLE,
  internal_error: EXIT_UNAVAILABLE,
}

/**
 * The exit code of an error that stopped a command, the one mapping every command uses: the
 * table above for an AuditError (a locked data directory and a database that cannot be reached
 * are storage_unavailable, a bad data directory or database URL validation_error); 2 for
 * everything else.
 */
export function exitCodeOf(error: unknown): number {
  return error instanceof AuditError ? EXIT_CODES[error.code] : EXIT_USAGE
}

export const dataDirFlag = Flags.string({
  description: 'data directory to work on',
  env: 'AUDIT_TRAIL_DATA_DIR',
  default: './audit-trail-data',
})

export const databaseUrlFlag = Flags.string({
  description:
    'PostgreSQL database to work on instead of the data directory (postgres://user:password@host:port/database)',
  env: 'AUDIT_TRAIL_DATABASE_URL',
})

/** The server a command talks to, and the key it sends: shared by the data commands and `tail`. */
export const serverFlagOptions = {
  description: 'URL of a running audit-trail server to talk to instead of a data directory',
  env: 'AUDIT_TRAIL_SERVER',
}

const serverFlag = Flags.string(serverFlagOptions)

export const apiKeyFlag = Flags.string({description: 'API key for --server', env: 'AUDIT_TRAIL_API_KEY'})

/** The trail a command works on (docs/trails.md); without it, `default`. */
export const trailFlag = Flags.string({
  description: 'trail to work on (audit-trail trails list); default: the trail default',
  env: 'AUDIT_TRAIL_TRAIL',
})

/** oclif's multi-line parse error as one line, without its preamble and its pointer to --help. */
export function oneSentence(message: string): string {
  const lines = message
    .split('\n')
    .map((line) => line.trim())
    .filter(
      (line) => line !== '' && !line.startsWith('See more help') && !/^The following errors? occurred:$/.test(line),
    )
  return lines.join(' ').replace(/\s+/g, ' ')
}

/** oclif names a missing flag without its dashes ("Missing required flag reason"): as typed, `--reason`. */
function withDashes(sentence: string): string {
  return sentence.replace(/(Missing required flags?:? )([a-z][\w-]*)/g, '$1--$2')
}

/** A command whose errors are one sentence on stderr with their exit code, --json or not. */
export abstract class OneSentenceCommand extends Command {
  protected override async catch(
    error: Error & {code?: string; exitCode?: number; oclif?: {exit?: number}},
  ): Promise<unknown> {
    // An error that carries an exit code is a parse error (an unknown flag, a missing one, a bad
    // value) or the exit of `this.exit(2)` after a message. oclif would print a parse error over
    // several lines followed by the whole usage (with --json: as a JSON dump on stdout, exit 1);
    // Errors are one sentence on stderr (README.md, "Exit codes"); the exit code must not depend on --json.
    if (error.oclif?.exit !== undefined) {
      const flags = [
        ...Object.keys({...this.ctor.baseFlags, ...this.ctor.flags}),
        ...(this.ctor.enableJsonFlag ? ['json'] : []),
      ]
      const sentence = withFlagHint(withDashes(oneSentence(error.message)), flags)
      if (error.code !== 'EEXIT') process.stderr.write(`Error: ${sentence} (see --help)\n`)
      this.exit(error.oclif.exit)
    }
    return super.catch(error)
  }
}

/** A command with oclif's `--json`. */
export abstract class JsonCommand extends OneSentenceCommand {
  static override enableJsonFlag = true
}

export abstract class AuditCommand extends JsonCommand {
  /** For a `not_found` error (an unknown event or agent): where the user sees what exists. */
  static notFound?: string

  static override baseFlags = {
    'data-dir': dataDirFlag,
    'database-url': databaseUrlFlag,
    server: serverFlag,
    'api-key': apiKeyFlag,
    trail: trailFlag,
  }

  /** The flags given on the command line (not from the environment or a default). */
  #given = new Set<string>()

  protected override async parse<F extends FlagOutput, B extends FlagOutput, A extends ArgOutput>(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    const output = await super.parse(options, argv)
    this.#given = new Set(output.raw.flatMap((token) => (token.type === 'flag' ? [token.flag] : [])))
    return output
  }

  /**
   * The server to talk to, or undefined for the data directory. Both on the command line is a
   * usage error; a flag beats the environment, so that `--data-dir X` is never quietly ignored
   * because AUDIT_TRAIL_SERVER is set (a CI job would check the wrong store). The URL is checked
   * here, so that a mistake in it is an input error rather than a server that cannot be reached.
   */
  protected serverOf(flags: {server?: string}): string | undefined {
    if (flags.server === undefined) return undefined
    if (this.#given.has('data-dir')) {
      if (this.#given.has('server'))
        throw new AuditError('validation_error', 'give either --data-dir or --server, not both')
      return undefined
    }
    return parseServerUrl(flags.server, this.#given.has('server') ? '--server' : 'AUDIT_TRAIL_SERVER')
  }

  /** Whether `flag` was given on the command line (not from the environment or a default). */
  protected given(flag: string): boolean {
    return this.#given.has(flag)
  }

  /**
   * Refuses `flag` (given) together with a server: explicitly with --server, or through
   * AUDIT_TRAIL_SERVER when no --data-dir says otherwise. (Not oclif's `exclusive`, which also
   * counts a server from the environment that --data-dir overrides.)
   */
  protected refuseWithServer(flags: {server?: string}, flag: string, why: string): void {
    if (this.serverOf(flags) !== undefined || this.#given.has('server'))
      throw new AuditError('validation_error', `--${flag} cannot be used with --server: ${why}`)
  }

  /**
   * Runs `work` against the chosen back end and closes it afterwards. A data directory must exist
   * unless `create` (the commands that record: ingest, timestamp).
   */
  protected async withClient<T>(
    flags: {'data-dir': string; 'database-url'?: string; server?: string; 'api-key'?: string; trail?: string},
    work: (client: AuditClient) => Promise<T>,
    options: {tsa?: {url: string; caPem: string[]}; create?: boolean} = {},
  ): Promise<T> {
    const server = this.serverOf(flags)
    const client = server
      ? new HttpClient(server, flags['api-key'], flags.trail)
      : await LocalClient.open(flags['data-dir'], {...options, databaseUrl: flags['database-url'], trail: flags.trail})
    try {
      return await work(client)
    } catch (error) {
      throw server ? withApiKeyHint(error, server, flags['api-key'] !== undefined) : error
    } finally {
      await client.close()
    }
  }

  protected override async catch(error: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<unknown> {
    if (error instanceof AuditError) {
      const notFound = (this.constructor as typeof AuditCommand).notFound
      const sentence = errorSentence(error, {given: (flag) => this.given(flag), notFound})
      // With --json a script reads stdout: it gets the API's error body (docs/api.md, Errors) there too.
      if (this.jsonEnabled())
        process.stdout.write(
          `${JSON.stringify({error: {code: error.code, message: sentence, details: error.details}})}\n`,
        )
      process.stderr.write(`Error: ${sentence}\n`)
      this.exit(exitCodeOf(error))
    }
    // oclif's own parse errors already carry exit code 2; anything else is unexpected input.
    if (error.oclif?.exit === undefined && error.exitCode === undefined) {
      process.stderr.write(`Error: ${error.message}\n`)
      this.exit(EXIT_USAGE)
    }
    return super.catch(error)
  }
}
