/**
 * What `migrate` proves of the log's identity once it is copied (docs/postgres.md, "Moving a data
 * directory over"): its latest checkpoint verifies with the copied log key under its origin and
 * names the copied tree, and the first checkpoint signed after the move is one a witness holding
 * the last one before it accepts (the witness's own checks, core/witness/judge.ts).
 */
import {formatAddCheckpoint} from '../core/witness/add-checkpoint-body.js'
import {judgeAddCheckpoint} from '../core/witness/judge.js'
import {ed25519NoteVerifier, NoteError, openNote} from '../core/note/index.js'
import type {CheckpointRecord} from '../core/types.js'
import {toHex} from '../core/hex.js'
import type {AuditServices} from './audit.js'
import {verifierKeyOf} from './migrate-identity.js'

export interface CheckpointProof {
  /** The data directory's latest checkpoint, checked in the database; null when it had none. */
  latest_checkpoint: {tree_size: number; origin: string; valid: boolean} | null
  /** The first checkpoint signed after the move, and whether a witness holding the one before accepts it. */
  checkpoint_after_move: {tree_size: number; witness_accepts: boolean} | null
  /** Why a check above failed, one sentence each. */
  problems: string[]
}

/**
 * `before`: the data directory's latest checkpoint; `logKeyPem`: its log key. Signs the copied
 * tree when it grew since `before`, as `serve` would at its first second.
 */
export async function proveCheckpoints(
  services: AuditServices,
  before: CheckpointRecord | undefined,
  logKeyPem: string | undefined,
): Promise<CheckpointProof> {
  if (before === undefined || logKeyPem === undefined)
    return {latest_checkpoint: null, checkpoint_after_move: null, problems: []}
  const problems: string[] = []
  const origin = before.note.slice(0, before.note.indexOf('\n'))
  const oldKey = verifierKeyOf(logKeyPem, origin)
  const identity = await services.checkpoints.identity()
  if (identity.verifierKey !== oldKey)
    problems.push(`the database signs as ${identity.verifierKey} where the data directory signed as ${oldKey}`)

  const copied = await services.store.latestCheckpoint()
  let valid = copied !== undefined && copied.note === before.note
  if (!valid) problems.push("the data directory's latest checkpoint is not the database's latest")
  try {
    openNote(before.note, [ed25519NoteVerifier(identity.verifierKey)])
  } catch (error) {
    if (!(error instanceof NoteError)) throw error
    valid = false
    problems.push(`the latest checkpoint does not verify with the copied log key: ${error.message}`)
  }
  const root = await services.tree.read((tree, size) => toHex(tree.rootAt(size)), before.tree_size)
  if (root !== before.root) {
    valid = false
    problems.push(`the latest checkpoint's root is not the copied tree's at size ${before.tree_size}`)
  }

  const after = (await services.checkpoints.signIfGrown()) ?? (await services.store.latestCheckpoint())!
  const proof =
    before.tree_size === 0 ? [] : (await services.integrity.consistency(before.tree_size, after.tree_size)).proof
  const verdict = judgeAddCheckpoint(
    formatAddCheckpoint({
      oldSize: before.tree_size,
      proof: proof.map((hash) => Buffer.from(hash, 'hex')),
      note: after.note,
    }),
    (name) => (name === origin ? [ed25519NoteVerifier(oldKey)] : undefined),
    () => ({size: before.tree_size, root: Buffer.from(before.root, 'hex').toString('base64')}),
  )
  if (!verdict.accepted)
    problems.push(`a witness holding tree size ${before.tree_size} refuses the first checkpoint: ${verdict.message}`)
  return {
    latest_checkpoint: {tree_size: before.tree_size, origin, valid},
    checkpoint_after_move: {tree_size: after.tree_size, witness_accepts: verdict.accepted},
    problems,
  }
}
