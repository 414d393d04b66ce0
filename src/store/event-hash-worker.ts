/**
 * A thread of hashed-scan.ts: decodes batches of stored rows (EVENT_JSON texts) and recomputes
 * their hashes while the store's thread reads the next batch.
 */
import {parentPort, workerData} from 'node:worker_threads'
import {SignatureChecker} from '../core/signature/index.js'
import {hashRows, type HashedBatch, type SignatureKeys} from './hashed-scan.js'

// The keys of the scan this thread serves: each imported once, for every batch.
const keys = (workerData as {keys?: SignatureKeys} | undefined)?.keys
const checker = new SignatureChecker((kid) => keys?.get(kid))

parentPort!.on('message', ({id, rows}: {id: number; rows: string[]}) => {
  let hashed: HashedBatch | undefined
  let error: string | undefined
  try {
    hashed = hashRows(rows, checker)
  } catch (failure) {
    error = (failure as Error).message
  }
  parentPort!.postMessage({id, hashed, error})
})
