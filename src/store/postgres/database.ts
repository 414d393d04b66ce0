/**
 * The pool of connections to the database and what its failures mean (docs/postgres.md, Faults): a
 * connection the server lost is storage_unavailable (503) and is closed, never handed out again.
 */
import pg from 'pg'
import {AuditError} from '../../core/errors.js'
import {DatabaseError} from './errors.js'

/** A statement on the pool or on a transaction's connection, resolving with its rows. */
export type Query = <R extends pg.QueryResultRow>(sql: string, params?: unknown[]) => Promise<R[]>

/** The statements of one connection (a transaction's) as a Query. */
export const queryOn =
  (client: pg.ClientBase): Query =>
  async (sql, params) =>
    (await client.query(sql, params)).rows

/** `work` between BEGIN and COMMIT on `client`, rolled back when it throws (migrations, erasure batches). */
export async function inTransaction<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  try {
    await client.query('BEGIN')
    const result = await work()
    await client.query('COMMIT')
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  }
}

/** The URL without its password, for messages. */
export function describe(url: string): string {
  try {
    const parsed = new URL(url)
    parsed.password = ''
    return parsed.toString()
  } catch {
    return 'the database URL'
  }
}

/** Whether a pg failure is the connection's (server down, restarted, unreachable): 503, not 500. */
function isConnectionError(error: unknown): boolean {
  const code = (error as {code?: unknown}).code
  if (typeof code === 'string' && (/^(08|57P|53)/.test(code) || /^E[A-Z]+$/.test(code))) return true
  return /Connection terminated|connection is closed|Client has encountered a connection error|timeout/i.test(
    (error as Error).message ?? '',
  )
}

/** A pool of `maxConnections` to `databaseUrl`; a URL that is not postgres:// is a DatabaseError. */
export function openPool(databaseUrl: string, maxConnections = 10): pg.Pool {
  let config: pg.PoolConfig
  try {
    config = {connectionString: databaseUrl, max: maxConnections, connectionTimeoutMillis: 10_000}
    if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new Error('not a postgres:// URL')
  } catch (error) {
    throw new DatabaseError(
      `${describe(databaseUrl)} is not a PostgreSQL URL (postgres://user:password@host:port/database)`,
      {cause: error},
    )
  }
  const pool = new pg.Pool(config)
  // An idle connection that breaks (the server restarted) is replaced at the next checkout.
  pool.on('error', () => undefined)
  return pool
}

/** The store's connections: statements, connections of their own and transactions, until closed. */
export class Database {
  #closed = false
  readonly #lost = new WeakSet<pg.PoolClient>()
  readonly #listeners = new WeakMap<pg.PoolClient, () => void>()

  constructor(private readonly pool: pg.Pool) {}

  /** A statement on any pooled connection; connection failures become storage_unavailable. */
  readonly query: Query = (sql, params = []) =>
    this.withClient(async (client) => (await client.query(sql, params)).rows)

  /** `work` on one connection of its own; connection failures become storage_unavailable. */
  async withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#connect('')
    let broken = false
    try {
      return await work(client)
    } catch (error) {
      broken = isConnectionError(error)
      throw mapped(error)
    } finally {
      this.#release(client, broken)
    }
  }

  /**
   * Runs `work` in one transaction begun by `begin` (its last statement's first row may give the
   * log's `size`, and is passed whole as `head`); rolled back (nothing written) when it throws.
   */
  async transaction<T>(
    work: (client: pg.PoolClient, size: number, head: Record<string, unknown>) => Promise<T>,
    begin = 'BEGIN',
  ): Promise<T> {
    const client = await this.#connect('nothing was recorded: ')
    let broken = false
    try {
      // BEGIN and, with LOCK_LOG, the log's row lock in one round trip (one simple query).
      const began = (await client.query(begin)) as unknown as pg.QueryResult | pg.QueryResult[]
      const last = Array.isArray(began) ? began[began.length - 1]! : began
      const head = (last.rows[0] ?? {}) as {size?: string}
      const result = await work(client, Number(head.size ?? 0), head)
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true
      })
      if (error instanceof AuditError) throw error
      // A COMMIT whose answer was lost may have committed: the caller answers 503 either way,
      // and a retry with the same ids is answered from what was stored (docs/api.md).
      throw new AuditError('storage_unavailable', `nothing was recorded: ${(error as Error).message}`, {cause: error})
    } finally {
      this.#release(client, broken)
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.pool.end()
  }

  /** A pooled connection; none to be had (the server is down or refuses) is storage_unavailable. */
  async #connect(prefix: string): Promise<pg.PoolClient> {
    if (this.#closed) throw new AuditError('storage_unavailable', 'the store is closed')
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (error) {
      throw new AuditError('storage_unavailable', `${prefix}the database is unavailable: ${(error as Error).message}`, {
        cause: error,
      })
    }
    // node-postgres reports a connection lost between queries (the server restarted) as an
    // 'error' event of the checked-out client, which would end the process unheard. The next
    // query fails with it, and the connection is discarded at release.
    const lost = () => this.#lost.add(client)
    client.on('error', lost)
    this.#listeners.set(client, lost)
    return client
  }

  /** Back to the pool; a connection that failed or was lost is closed instead. */
  #release(client: pg.PoolClient, broken: boolean): void {
    const listener = this.#listeners.get(client)
    if (listener !== undefined) client.off('error', listener)
    client.release(broken || this.#lost.has(client))
  }
}

function mapped(error: unknown): unknown {
  if (error instanceof AuditError) return error
  if (isConnectionError(error))
    return new AuditError('storage_unavailable', `the database is unavailable: ${(error as Error).message}`, {
      cause: error,
    })
  return error
}
