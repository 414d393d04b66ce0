/**
 * The sentence a command ends with on an error (README.md, "Exit codes"): it names flags as they
 * are typed (`--since`) and says what to do next. The services speak the API's terms (the query
 * parameter `since`, a 404 "no event with id x"); here they become the command line's.
 */
import path from 'node:path'
import {AuditError} from '../core/errors.js'
import {LOCK_FILE} from '../store/sqljs/lock.js'
import {StoreError} from '../store/index.js'

/** API fields (as in an error's `details`) and the flag that gives each on the command line. */
const FIELD_FLAGS: Readonly<Record<string, string>> = {
  agent_id: 'agent',
  action_type: 'action-type',
  trace_id: 'trace-id',
  session_id: 'session-id',
  since: 'since',
  until: 'until',
  limit: 'limit',
  offset: 'offset',
  reason: 'reason',
  'scope.agent_id': 'agent',
  'scope.since': 'since',
  'scope.until': 'until',
}

/** What to do about a key that lacks a scope (a 403). */
export const SCOPE_HINT = 'give a key with that scope (--api-key or the environment variable AUDIT_TRAIL_API_KEY)'

interface ErrorContext {
  /** Whether the flag was given on the command line. */
  given(flag: string): boolean
  /** For a `not_found` error: where to see what exists (`audit-trail agents lists the agents`). */
  notFound?: string
}

/** The one sentence for `error`, in the command line's terms, with what to do next. */
export function errorSentence(error: Error, context: ErrorContext): string {
  if (error instanceof StoreError && error.reason.startsWith('database')) return databaseSentence(error)
  if (!(error instanceof AuditError)) return error.message
  let message = inFlagTerms(error, context)
  if (error.code === 'not_found' && context.notFound !== undefined) message = `${message}; ${context.notFound}`
  if (error.code === 'forbidden' && !message.includes('--api-key')) message = `${message}: ${SCOPE_HINT}`
  if (error.code === 'tsa_unavailable' && !/try again/.test(message))
    message = `${message}; try again when the TSA answers, or give another with --tsa-url and --tsa-ca`
  return message
}

/** A validation error's API fields as the flags the user gave them with. */
function inFlagTerms(error: AuditError, context: ErrorContext): string {
  let message = error.message
  for (const detail of error.details ?? []) {
    const flag = FIELD_FLAGS[detail.field]
    if (flag === undefined || !context.given(flag)) continue
    message = message.replace(`${detail.field} ${detail.message}`, `--${flag} ${detail.message}`)
    if (!message.includes(`--${flag}`)) message = `${message} (--${flag})`
  }
  return message
}

/** A database that cannot be used: check the server and the URL (a newer schema says its own remedy). */
function databaseSentence(error: StoreError): string {
  if (!error.message.startsWith('cannot use the database')) return error.message
  return (
    `${error.message}; check that PostgreSQL runs there and that --database-url (or AUDIT_TRAIL_DATABASE_URL) ` +
    `names a database you may use`
  )
}

/**
 * A file the user named that cannot be read, with what was expected there: `cannot read x.json (no
 * such file): give the path of ...`.
 */
export function cannotRead(file: string, error: unknown, expected: string): string {
  const code = (error as NodeJS.ErrnoException).code
  const why =
    code === 'ENOENT'
      ? 'no such file'
      : code === 'EISDIR'
        ? 'it is a directory'
        : code === 'EACCES'
          ? 'permission denied'
          : (error as Error).message
  return `cannot read ${file} (${why}): give the path of ${expected}`
}

/**
 * A data directory another process owns, with the remedy of a command that needs it to itself
 * (`serve`, `migrate`: talking to the owner with --server, as the data commands may, does not do).
 * A lock file that cannot be read keeps its own remedy.
 */
export function lockedSentence(error: StoreError, remedy: string): string {
  const lock = error.lock
  if (lock === undefined || lock.pid === 0) return error.message
  const owner = `data directory ${lock.dataDir} is in use by process ${lock.pid}`
  if (lock.host === undefined) return `${owner}: ${remedy}`
  return (
    `${owner} on host ${lock.host}, in another host or container that cannot be checked from here: ${remedy}, ` +
    `or if that host or container is gone for good, make sure nothing else uses the directory and remove ` +
    `${path.join(lock.dataDir, LOCK_FILE)}`
  )
}
