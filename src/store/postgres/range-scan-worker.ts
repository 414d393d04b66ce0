/**
 * A thread of range-scan.ts: reads the index ranges it is given over a connection of its own,
 * decodes the rows and recomputes their hashes, and hands each range back hashed.
 */
import {parentPort, workerData} from 'node:worker_threads'
import pg from 'pg'
import {hashRows, type HashedBatch} from '../hashed-scan.js'
import {EVENT_JSON} from './schema.js'

export interface RangeRequest {
  /** First index of the range, or null for none (a row under a negative index belongs to the first range). */
  from: number | null
  to: number
}

export type RangeAnswer = {range: RangeRequest; hashed: HashedBatch} | {range: RangeRequest; error: string}

const client = new pg.Client({connectionString: (workerData as {databaseUrl: string}).databaseUrl})
const connected = client.connect()
// A failure of the connection fails the range being read; the scan then ends with it.
client.on('error', () => undefined)
let queue = Promise.resolve()

parentPort!.on('message', (range: RangeRequest) => {
  // Asked at once, not after the range before is hashed: node-postgres sends it as soon as the
  // connection is free, so the server builds these rows while this thread hashes the ones before.
  const read = connected.then(() =>
    client.query<{row: string}>(
      range.from === null
        ? `SELECT ${EVENT_JSON} AS row FROM events WHERE "index" < $1 ORDER BY "index"`
        : `SELECT ${EVENT_JSON} AS row FROM events WHERE "index" >= $2 AND "index" < $1 ORDER BY "index"`,
      range.from === null ? [range.to] : [range.to, range.from],
    ),
  )
  // A failure is taken in the range's turn, not as an unhandled rejection before.
  read.catch(() => undefined)
  queue = queue.then(async () => {
    let answer: RangeAnswer
    try {
      const {rows} = await read
      answer = {range, hashed: hashRows(rows.map((r) => r.row))}
    } catch (error) {
      answer = {range, error: (error as Error).message}
    }
    parentPort!.postMessage(answer)
  })
})
