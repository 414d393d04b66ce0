import {availableParallelism} from 'node:os'

/**
 * Threads that recompute event hashes for a chain check: one per core besides the calling one
 * (which hashes a share too), at least one, at most 7, as the Merkle build counts them
 * (threads/merkle-build.ts).
 */
export function hashingThreads(): number {
  return Math.max(1, Math.min(availableParallelism() - 1, 7))
}
