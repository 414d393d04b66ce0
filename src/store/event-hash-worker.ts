/**
 * A thread of hashed-scan.ts: decodes batches of stored rows (EVENT_JSON texts) and recomputes
 * their hashes while the store's thread reads the next batch.
 */
import {parentPort} from 'node:worker_threads'
import {hashRows, type HashedBatch} from './hashed-scan.js'

parentPort!.on('message', ({id, rows}: {id: number; rows: string[]}) => {
  let hashed: HashedBatch | undefined
  let error: string | undefined
  try {
    hashed = hashRows(rows)
  } catch (failure) {
    error = (failure as Error).message
  }
  parentPort!.postMessage({id, hashed, error})
})
