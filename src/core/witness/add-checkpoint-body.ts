/**
 * The body of a C2SP tlog-witness v1.0.0 `add-checkpoint` request: `old <size>`, zero to 63
 * base64 consistency proof lines, an empty line, then the signed checkpoint note.
 */
import {CheckpointError} from '../checkpoint/note-text.js'
import {strictBase64} from '../note/verifier-keys.js'

const MAX_PROOF_LINES = 63
/** The media type of a 409 answer naming the witness's size (tlog-witness, add-checkpoint). */
export const SIZE_MEDIA_TYPE = 'text/x.tlog.size'

interface AddCheckpointRequest {
  oldSize: number
  proof: Uint8Array[]
  /** The signed checkpoint note, every signature line included. */
  note: string
}

export function formatAddCheckpoint(request: AddCheckpointRequest): string {
  const proof = request.proof.map((hash) => `${Buffer.from(hash).toString('base64')}\n`).join('')
  return `old ${request.oldSize}\n${proof}\n${request.note}`
}

export function parseAddCheckpoint(body: string): AddCheckpointRequest {
  const blank = body.indexOf('\n\n')
  if (blank < 0) throw new CheckpointError('malformed_request', 'the request has no empty line before the checkpoint')
  const [oldLine, ...proofLines] = body.slice(0, blank).split('\n')
  const old = /^old (0|[1-9][0-9]*)$/.exec(oldLine ?? '')
  if (!old || !Number.isSafeInteger(Number(old[1])))
    throw new CheckpointError('malformed_request', 'the first line is not "old <size>"')
  if (proofLines.length > MAX_PROOF_LINES)
    throw new CheckpointError('malformed_request', `more than ${MAX_PROOF_LINES} consistency proof lines`)
  const proof = proofLines.map((line, i) => {
    const hash = strictBase64(line)
    if (!hash || hash.length !== 32)
      throw new CheckpointError('malformed_request', `consistency proof line ${i + 1} is not a base64 SHA-256 hash`)
    return hash
  })
  return {oldSize: Number(old[1]), proof, note: body.slice(blank + 2)}
}

/** The size in a 409 answer: a decimal and a newline. */
export function parseSizeAnswer(body: string): number | undefined {
  const match = /^(0|[1-9][0-9]*)\n$/.exec(body)
  return match && Number.isSafeInteger(Number(match[1])) ? Number(match[1]) : undefined
}
