/** The thread of package-hashes.ts: hashes the events of each run of text it is sent. */
import {parentPort} from 'node:worker_threads'
import {runHashes} from './package-hashes.js'

parentPort!.on('message', ({id, text}: {id: number; text: string}) => {
  let hashes: Array<string | null> | undefined
  try {
    hashes = runHashes(text)
  } catch {
    // Text the caller's JSON.parse refuses too: the verification reports it.
  }
  parentPort!.postMessage({id, hashes})
})
