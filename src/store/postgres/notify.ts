/**
 * Listening to what other processes commit (docs/postgres.md, Several writers, one log): the
 * channels of channels.ts on a connection of its own, so that each process's stream carries what
 * any process recorded, timestamped or erased.
 */
import pg from 'pg'
import type {TimestampRecord} from '../../core/types.js'
import type {Query} from './database.js'
import {timestampsAt} from './records.js'
import {quoteIdentifier, type TrailScope} from './trail-scope.js'

/** After a lost LISTEN connection, try again this often. */
const RELISTEN_MS = 1000

/**
 * EventStore.watch over a connection of its own to `databaseUrl`, listening again after a loss.
 * `issued` holds the positions of the timestamps this process issued: its own feed has announced
 * them already, so they are taken out and not announced again.
 */
export async function watch(
  query: Query,
  databaseUrl: string,
  {channels}: TrailScope,
  issued: Set<number>,
  grown: (size?: number) => void,
  timestamped?: (record: TimestampRecord) => void,
  erased?: () => void,
): Promise<() => Promise<void>> {
  let stopped = false
  let client: pg.Client | undefined
  let retry: NodeJS.Timeout | undefined
  // Timestamps of other processes, one read at a time so that they are announced in turn.
  const [latest] = await query<{n: string}>('SELECT coalesce(max(position), 0) AS n FROM timestamps')
  let seen = Number(latest!.n)
  let reading = Promise.resolve()
  const announce = (rest: string, param: number) => {
    reading = reading
      .then(async () => {
        for (const {position, record} of await timestampsAt(query, rest, [param])) {
          seen = Math.max(seen, position)
          if (!issued.delete(position)) timestamped?.(record)
        }
      })
      .catch(() => undefined)
  }
  const listen = async (): Promise<void> => {
    const next = new pg.Client({connectionString: databaseUrl})
    next.on('notification', (message) => {
      if (message.channel === channels.events) grown(Number(message.payload))
      else if (message.channel === channels.erasures) erased?.()
      else announce('WHERE position = $1', Number(message.payload))
    })
    next.on('error', () => undefined)
    next.on('end', () => {
      if (stopped) return
      client = undefined
      retry = setTimeout(() => void listen().catch(() => undefined), RELISTEN_MS)
    })
    try {
      await next.connect()
      for (const channel of [channels.events, channels.timestamps, channels.erasures])
        await next.query(`LISTEN ${quoteIdentifier(channel)}`)
    } catch (error) {
      await next.end().catch(() => undefined)
      throw error
    }
    client = next
    // Whatever was committed while no connection listened is read now.
    grown()
    erased?.()
    announce('WHERE position > $1 ORDER BY position', seen)
  }
  await listen()
  return async () => {
    stopped = true
    clearTimeout(retry)
    await client?.end().catch(() => undefined)
  }
}
