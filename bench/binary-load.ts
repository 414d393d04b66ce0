/**
 * A load client for binary responses: undici's Pool from a worker thread, each body consumed
 * without decoding. autocannon appends every body to a string, which makes a response of random
 * bytes (a tile of hashes) cost the client far more than the server; rows that compare a binary
 * endpoint with a JSON one use this client for both.
 */
import {once} from 'node:events'
import {Worker} from 'node:worker_threads'

export interface LoadResult {
  rps: number
  p50: number
  p99: number
}

/**
 * GET `url` with 50 connections for 8 s from a worker thread (the server keeps its own thread);
 * with `paths`, each request the next of them on `url`'s origin, in turn.
 */
export async function binaryLoad(url: string, connections = 50, seconds = 8, paths?: string[]): Promise<LoadResult> {
  const worker = new Worker(new URL('binary-load-worker.mjs', import.meta.url), {
    workerData: {url, connections, seconds, paths},
  })
  const [result] = (await once(worker, 'message')) as [LoadResult]
  return result
}
