/**
 * The entry point of a hash worker thread started by merkle-build.ts: it hashes blocks of the
 * shared job until none is left to claim, then reports how many it hashed.
 */
import {parentPort, workerData} from 'node:worker_threads'
import {hashClaimedBlocks, type BlockJob} from '../core/merkle/levels.js'

// Buffers arrive as plain Uint8Arrays over the same SharedArrayBuffers; re-wrap them for copy().
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
const shared = workerData as BlockJob
const job: BlockJob = {...shared, leafData: asBuffer(shared.leafData), levels: shared.levels.map(asBuffer)}

parentPort!.postMessage(hashClaimedBlocks(job))
