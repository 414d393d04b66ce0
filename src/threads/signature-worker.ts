/** A thread of signature-pool.ts: verifies the signature jobs it is sent, each with its key. */
import {parentPort} from 'node:worker_threads'
import {SignatureChecker, type SignatureJob} from '../core/signature/index.js'

// Jobs carry their JWK; the checker keeps each key imported across batches. A signature's Buffer
// arrives as a Uint8Array, which is all verification reads.
const checker = new SignatureChecker(() => undefined)

parentPort!.on('message', ({id, jobs}: {id: number; jobs: SignatureJob[]}) => {
  parentPort!.postMessage({id, verdicts: jobs.map((job) => checker.run(job))})
})
