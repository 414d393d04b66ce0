/**
 * What a C2SP tlog-witness v1.0.0 witness answers to one `add-checkpoint` request, given the logs it
 * trusts and the checkpoint it last cosigned for each: the checks of the spec, in its order, with
 * no state changed. The witness (services/witness.ts) persists and cosigns what this accepts;
 * `migrate` asks it whether a witness holding the log's last checkpoint accepts the first one
 * signed after the move.
 */
import {CheckpointError, parseCheckpoint} from '../checkpoint/index.js'
import {MerkleError, verifyConsistency} from '../merkle/index.js'
import {NoteError, openNote, type NoteVerifier} from '../note/index.js'
import {parseAddCheckpoint} from './add-checkpoint-body.js'

/** What a witness holds for a log: the size and base64 root it last cosigned. */
export interface WitnessedTree {
  size: number
  root: string
}

type WitnessVerdict =
  | {accepted: true; origin: string; size: number; root: string; text: string}
  | {accepted: false; status: 400 | 403 | 404 | 422; message: string}
  /** The request's old size is not the one the witness holds: it answers with its size. */
  | {accepted: false; status: 409; message: string; heldSize?: number}

type Refusal = Extract<WitnessVerdict, {accepted: false}>

/** The note's text once a trusted key of the log signed it, or why not. */
function signedText(note: string, verifiers: NoteVerifier[], origin: string): {text: string} | Refusal {
  try {
    return {text: openNote(note, verifiers).text}
  } catch (error) {
    if (!(error instanceof NoteError)) throw error
    return error.code === 'malformed'
      ? {accepted: false, status: 400, message: error.message}
      : {
          accepted: false,
          status: 403,
          message: `the checkpoint is not signed by a trusted key of ${origin}: ${error.message}`,
        }
  }
}

/**
 * Why the checkpoint does not extend the tree the witness holds, if it does not: the same size with
 * the same root, or a consistency proof from the held size (empty from size 0).
 */
function extensionRefusal(
  held: WitnessedTree,
  checkpoint: {size: number; root: Uint8Array},
  root: string,
  request: {oldSize: number; proof: Uint8Array[]},
): Refusal | undefined {
  if (request.oldSize === checkpoint.size && held.size > 0) {
    if (root === held.root) return undefined
    return {
      accepted: false,
      status: 409,
      message: `a checkpoint of size ${held.size} with another root was already cosigned`,
    }
  }
  if (held.size === 0) {
    if (request.proof.length === 0) return undefined
    return {accepted: false, status: 422, message: 'the consistency proof from size 0 must be empty'}
  }
  try {
    verifyConsistency(held.size, checkpoint.size, Buffer.from(held.root, 'base64'), checkpoint.root, request.proof)
    return undefined
  } catch (error) {
    if (!(error instanceof MerkleError)) throw error
    const message = `the consistency proof from size ${held.size} does not verify: ${error.message}`
    return {accepted: false, status: 422, message}
  }
}

export function judgeAddCheckpoint(
  body: string,
  verifiersOf: (origin: string) => NoteVerifier[] | undefined,
  heldOf: (origin: string) => WitnessedTree | undefined,
): WitnessVerdict {
  let request
  let checkpoint
  try {
    request = parseAddCheckpoint(body)
    checkpoint = parseCheckpoint(request.note.slice(0, Math.max(0, request.note.lastIndexOf('\n\n') + 1)))
  } catch (error) {
    if (error instanceof CheckpointError) return {accepted: false, status: 400, message: error.message}
    throw error
  }
  const verifiers = verifiersOf(checkpoint.origin)
  if (!verifiers) return {accepted: false, status: 404, message: `unknown log origin ${checkpoint.origin}`}
  const signed = signedText(request.note, verifiers, checkpoint.origin)
  if (!('text' in signed)) return signed
  if (request.oldSize > checkpoint.size) {
    const message = `old size ${request.oldSize} is above the checkpoint size ${checkpoint.size}`
    return {accepted: false, status: 400, message}
  }
  const held = heldOf(checkpoint.origin) ?? {size: 0, root: ''}
  if (request.oldSize !== held.size) {
    const message = `the witness holds size ${held.size}, not ${request.oldSize}`
    return {accepted: false, status: 409, message, heldSize: held.size}
  }
  const root = Buffer.from(checkpoint.root).toString('base64')
  const refusal = extensionRefusal(held, checkpoint, root, request)
  if (refusal !== undefined) return refusal
  return {accepted: true, origin: checkpoint.origin, size: checkpoint.size, root, text: signed.text}
}
