/**
 * C2SP tlog-checkpoint v1.0.0: the note text `<origin>\n<tree size>\n<base64 root hash>\n`,
 * optionally followed by extension lines. Parsing refuses anything else.
 */
import {strictBase64} from '../note/verifier-keys.js'
import {CodedError} from '../coded-error.js'

export interface Checkpoint {
  origin: string
  size: number
  root: Uint8Array
  extensions: string[]
}

/** The checkpoint domain's one error class, with a closed set of codes (C2SP tlog-checkpoint, tlog-witness). */
export type CheckpointErrorCode =
  /** A note text that is not a checkpoint: origin, size, root hash and extension lines. */
  | 'malformed_checkpoint'
  /** A witness's add-checkpoint request body that is not `old <size>`, proof lines, a blank line. */
  | 'malformed_request'

export class CheckpointError extends CodedError<CheckpointErrorCode> {
  override name = 'CheckpointError'
}

export function formatCheckpoint(checkpoint: Checkpoint): string {
  const lines = [
    checkpoint.origin,
    String(checkpoint.size),
    Buffer.from(checkpoint.root).toString('base64'),
    ...checkpoint.extensions,
  ]
  return `${lines.join('\n')}\n`
}

/** Parses a checkpoint body (the text of its note). Sizes above 2^53 - 1 are refused. */
export function parseCheckpoint(text: string): Checkpoint {
  if (!text.endsWith('\n')) throw new CheckpointError('malformed_checkpoint', 'a checkpoint ends with a newline')
  const [origin, size, root, ...extensions] = text.slice(0, -1).split('\n')
  if (!origin || !isValidOrigin(origin))
    throw new CheckpointError('malformed_checkpoint', 'the checkpoint has no valid origin line')
  if (size === undefined || !/^(0|[1-9][0-9]*)$/.test(size) || !Number.isSafeInteger(Number(size))) {
    throw new CheckpointError(
      'malformed_checkpoint',
      'the checkpoint tree size is not a decimal number without leading zeros',
    )
  }
  const hash = root === undefined ? undefined : strictBase64(root)
  if (!hash || hash.length !== 32)
    throw new CheckpointError('malformed_checkpoint', 'the checkpoint root hash is not 32 bytes in base64')
  if (extensions.some((line) => line === ''))
    throw new CheckpointError('malformed_checkpoint', 'the checkpoint has an empty extension line')
  return {origin, size: Number(size), root: hash, extensions}
}

/** An origin is one non-empty line; it should be the log's URL prefix without a scheme (tlog-checkpoint). */
export function isValidOrigin(origin: string): boolean {
  return origin.length > 0 && !/[\u0000-\u001f\u007f]/.test(origin) && origin.trim() === origin
}
