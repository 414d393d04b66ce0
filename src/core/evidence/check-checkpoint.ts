/**
 * The package's `checkpoint` member: a C2SP signed checkpoint with its witness cosignatures and a
 * consistency proof from its tree to the package's. With the log's verifier key it is opened as
 * signed-note says (a known key that fails rejects, unknown keys are ignored) and at least
 * `minWitnesses` of the given witness keys must have cosigned it; without the key only its form
 * and its consistency with the package tree can be checked.
 */
import {noteVerifier, parseCheckpoint, CheckpointError, type Checkpoint} from '../checkpoint/index.js'
import {MerkleError, verifyConsistency} from '../merkle/index.js'
import {NoteError, openNote, parseNote, parseVerifierKey} from '../note/index.js'
import {fail} from './failures.js'

export interface PackageCheckpoint {
  note: string
  consistency_proof: string[]
}

export interface CheckpointKeys {
  /** The log's signed-note verifier key (type 0x01). */
  logKey?: string
  /** Witness cosignature verifier keys (type 0x04). */
  witnessKeys?: string[]
  /** How many of witnessKeys must have cosigned (default 0). */
  minWitnesses?: number
}

export interface CheckpointVerdict {
  origin: string
  tree_size: number
  /** Whether the log's signature was checked (a --log-key was given). */
  signature_checked: boolean
  /** Names of the given witnesses whose cosignature verified. */
  witnesses: string[]
}

const HEX64 = /^[0-9a-f]{64}$/

function checkpointFailure(message: string): never {
  fail({check: 'checkpoint', message})
}

type VerifierKey = ReturnType<typeof parseVerifierKey>

/**
 * The checkpoint's note parsed; with the log's key, its signature checked as signed-note says and
 * the names of the given witnesses whose cosignature verifies.
 */
function openCheckpoint(
  note: string,
  log: VerifierKey | undefined,
  keys: CheckpointKeys,
): {parsed: Checkpoint; witnesses: string[]} {
  try {
    const parsed = parseCheckpoint(parseNote(note).text)
    if (!log || keys.logKey === undefined) return {parsed, witnesses: []}
    if (log.name !== parsed.origin)
      checkpointFailure(`the checkpoint's origin ${parsed.origin} is not the log key's name ${log.name}`)
    const witnessVerifiers = (keys.witnessKeys ?? []).map(noteVerifier)
    const opened = openNote(note, [noteVerifier(keys.logKey), ...witnessVerifiers])
    if (!opened.verified.some((s) => s.name === log.name && s.keyId === log.keyId))
      checkpointFailure('the checkpoint is not signed by the log key')
    const witnesses = witnessVerifiers
      .filter((w) => opened.verified.some((s) => s.name === w.name && s.keyId === w.keyId))
      .map((w) => w.name)
    return {parsed, witnesses}
  } catch (error) {
    if (error instanceof NoteError && error.code === 'unverified')
      checkpointFailure('the checkpoint is not signed by the log key')
    if (error instanceof NoteError || error instanceof CheckpointError)
      checkpointFailure(`the checkpoint does not verify: ${error.message}`)
    throw error
  }
}

/** The checkpoint's tree is a prefix of the package's (RFC 9162 section 2.1.4 consistency). */
function checkPrefix(parsed: Checkpoint, tree: {size: number; root: string}, proof: readonly string[]): void {
  try {
    verifyConsistency(
      parsed.size,
      tree.size,
      parsed.root,
      Buffer.from(tree.root, 'hex'),
      proof.map((h) => Buffer.from(h, 'hex')),
    )
  } catch (error) {
    if (!(error instanceof MerkleError)) throw error
    checkpointFailure(
      `the checkpoint's tree (size ${parsed.size}) is not a prefix of the package tree ` +
        `(size ${tree.size}): ${error.message}`,
    )
  }
}

export function checkPackageCheckpoint(
  checkpoint: PackageCheckpoint | null | undefined,
  tree: {size: number; root: string},
  keys: CheckpointKeys,
): CheckpointVerdict | null {
  // A malformed key is the caller's error whatever the package holds (an empty one included).
  const log = keys.logKey === undefined ? undefined : parseVerifierKey(keys.logKey)
  if (checkpoint === null || checkpoint === undefined) {
    if (log) checkpointFailure('the package has no checkpoint to check against the given log key (--log-key)')
    return null
  }
  const shaped =
    typeof checkpoint === 'object' &&
    typeof checkpoint.note === 'string' &&
    Array.isArray(checkpoint.consistency_proof) &&
    checkpoint.consistency_proof.every((h) => typeof h === 'string' && HEX64.test(h))
  if (!shaped) checkpointFailure('checkpoint must be {"note": signed note, "consistency_proof": [hex]}')
  const {parsed, witnesses} = openCheckpoint(checkpoint.note, log, keys)
  const needed = keys.minWitnesses ?? 0
  if (witnesses.length < needed) {
    checkpointFailure(
      `the checkpoint has ${witnesses.length} valid cosignature${witnesses.length === 1 ? '' : 's'} ` +
        `of the given witness keys; ${needed} required (--min-witnesses)`,
    )
  }
  checkPrefix(parsed, tree, checkpoint.consistency_proof)
  return {origin: parsed.origin, tree_size: parsed.size, signature_checked: keys.logKey !== undefined, witnesses}
}
