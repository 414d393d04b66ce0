/**
 * A thread of hashed-scan.ts: decodes chunks of stored rows (texts of the scan's RowForm) and
 * recomputes their hashes while the store's thread reads the next batch.
 */
import {parentPort, workerData} from 'node:worker_threads'
import {SignatureChecker} from '../core/signature/index.js'
import {hashRows, type HashedBatch, type RowForm, type SignatureKeys} from './hashed-scan.js'

// The keys of the scan this thread serves (each imported once, for every batch) and its rows' form.
const {keys, form} = (workerData ?? {}) as {keys?: SignatureKeys; form?: RowForm}
const checker = new SignatureChecker((kid) => keys?.get(kid))

parentPort!.on('message', ({id, rows}: {id: number; rows: string[]}) => {
  let hashed: HashedBatch | undefined
  let error: string | undefined
  try {
    hashed = hashRows(rows, checker, form)
  } catch (failure) {
    error = (failure as Error).message
  }
  parentPort!.postMessage({id, hashed, error})
})
