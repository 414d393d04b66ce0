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
  let text
  try {
    text = openNote(request.note, verifiers).text
  } catch (error) {
    if (!(error instanceof NoteError)) throw error
    return error.code === 'malformed'
      ? {accepted: false, status: 400, message: error.message}
      : {
          accepted: false,
          status: 403,
          message: `the checkpoint is not signed by a trusted key of ${checkpoint.origin}: ${error.message}`,
        }
  }
  if (request.oldSize > checkpoint.size)
    return {
      accepted: false,
      status: 400,
      message: `old size ${request.oldSize} is above the checkpoint size ${checkpoint.size}`,
    }
  const held = heldOf(checkpoint.origin) ?? {size: 0, root: ''}
  if (request.oldSize !== held.size)
    return {
      accepted: false,
      status: 409,
      message: `the witness holds size ${held.size}, not ${request.oldSize}`,
      heldSize: held.size,
    }
  const root = Buffer.from(checkpoint.root).toString('base64')
  if (request.oldSize === checkpoint.size && held.size > 0) {
    if (root !== held.root)
      return {
        accepted: false,
        status: 409,
        message: `a checkpoint of size ${held.size} with another root was already cosigned`,
      }
  } else if (held.size > 0) {
    try {
      verifyConsistency(held.size, checkpoint.size, Buffer.from(held.root, 'base64'), checkpoint.root, request.proof)
    } catch (error) {
      if (error instanceof MerkleError)
        return {
          accepted: false,
          status: 422,
          message: `the consistency proof from size ${held.size} does not verify: ${error.message}`,
        }
      throw error
    }
  } else if (request.proof.length > 0) {
    return {accepted: false, status: 422, message: 'the consistency proof from size 0 must be empty'}
  }
  return {accepted: true, origin: checkpoint.origin, size: checkpoint.size, root, text}
}
