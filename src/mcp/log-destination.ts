/**
 * Where the proxy's events go (CONTRACT 11, 8): a running server (`--server URL`, the API's
 * POST /v1/batch through the CLI's HttpClient) or a store opened directly (`--data-dir`,
 * `--database-url`, through LocalClient and the store's ingest service). Either way events go
 * through the ingest path every client uses; the proxy never builds a stored event itself.
 */
import path from 'node:path'
import {sha256Hex} from '../core/crypto.js'
import type {AuditClient} from '../cli/client.js'

export interface LogDestination {
  /** Names the log in messages, without secrets: "the server at http://...". */
  readonly description: string
  /** Names the queue directory of this log (a digest: a database URL may hold a password). */
  readonly key: string
  /** Whether the log is a store this process opens, and so locks while it holds it open. */
  readonly local: boolean
  open(): Promise<AuditClient>
  /** Throws when the log cannot be reached now (for `--require-log` while nothing is queued). */
  probe(client: AuditClient): Promise<void>
}

/** A database URL without its password, for messages. */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'the database URL given'
  }
}

/** How a trail is named in a queue's key and a description: nothing for the trail of no `--trail`. */
const onTrail = (trail: string | undefined) => (trail === undefined ? '' : ` trail ${trail}`)

export function serverDestination(server: string, apiKey: string | undefined, trail?: string): LogDestination {
  const base = server.replace(/\/+$/, '')
  return {
    description: `the server at ${base}${onTrail(trail)}`,
    key: sha256Hex(`server ${base}${onTrail(trail)}`).slice(0, 16),
    local: false,
    async open() {
      const {HttpClient} = await import('../cli/client.js')
      return new HttpClient(base, apiKey, trail)
    },
    // GET /healthz needs no key (CONTRACT 4, Other); a refused key shows on the first batch.
    async probe() {
      const response = await fetch(`${base}/healthz`)
      if (response.status !== 200) throw new Error(`GET /healthz answered ${response.status}`)
    },
  }
}

export function storeDestination(dataDir: string, databaseUrl: string | undefined, trail?: string): LogDestination {
  const where = databaseUrl === undefined ? path.resolve(dataDir) : databaseUrl
  const store =
    databaseUrl === undefined
      ? `the data directory ${path.resolve(dataDir)}`
      : `the database ${withoutPassword(databaseUrl)}`
  return {
    description: `${store}${onTrail(trail)}`,
    key: sha256Hex(`store ${where}${onTrail(trail)}`).slice(0, 16),
    local: true,
    async open() {
      const {LocalClient} = await import('../cli/client.js')
      return LocalClient.open(dataDir, {create: true, databaseUrl, trail})
    },
    // An open store is a reachable one; PostgreSQL is asked, as a server can go away under a pool.
    async probe(client) {
      if (databaseUrl !== undefined) await client.merkleRoot()
    },
  }
}
