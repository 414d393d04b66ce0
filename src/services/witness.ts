/**
 * A C2SP tlog-witness v1.0.0 witness (`audit-trail witness serve`): for each configured log (an
 * origin and its verifier keys) it keeps the size and root of the latest checkpoint it cosigned,
 * in one small JSON file replaced atomically, and answers `add-checkpoint` with the statuses the
 * spec fixes: 404 unknown origin, 403 no trusted signature, 400 malformed or old size above the
 * checkpoint's, 409 old size not the one it holds (body: its size) or same size with another
 * root, 422 consistency proof that does not verify, 200 with a tlog-cosignature v1 line.
 */
import {link, mkdir, open, readFile, rename, unlink} from 'node:fs/promises'
import path from 'node:path'
import {
  CheckpointError,
  cosignatureSigner,
  cosignatureVerifierKey,
  parseCheckpoint,
  type CosignatureSigner,
} from '../core/checkpoint/index.js'
import {ed25519FromSeed, ed25519Generate, ed25519SeedFromPem, ed25519SeedToPem} from '../core/crypto.js'
import {MerkleError, verifyConsistency} from '../core/merkle/index.js'
import {ed25519NoteVerifier, NoteError, openNote, signatureLine, type NoteVerifier} from '../core/note/index.js'
import {AddCheckpointError, parseAddCheckpoint, SIZE_MEDIA_TYPE} from '../core/witness/add-checkpoint.js'

export const WITNESS_KEY_FILE = 'witness.key'
export const WITNESS_STATE_FILE = 'state.json'

export interface WitnessAnswer {
  status: 200 | 400 | 403 | 404 | 409 | 422
  contentType: string
  body: string
}

interface LogState {
  size: number
  /** Base64 root hash. */
  root: string
}

export interface WitnessOptions {
  /** The directory holding the witness key and state. */
  dir: string
  /** The witness's key name (a schema-less URL, tlog-cosignature). */
  name: string
  /** Trusted logs: origin to the verifier keys (type 0x01) of its signers. */
  logs: ReadonlyMap<string, readonly string[]>
  /** POSIX seconds to cosign with (tests). */
  now?: () => number
}

export class Witness {
  private queue: Promise<unknown> = Promise.resolve()

  private constructor(
    private readonly options: WitnessOptions,
    private readonly signer: CosignatureSigner,
    private readonly verifiers: ReadonlyMap<string, NoteVerifier[]>,
    private state: Record<string, LogState>,
  ) {}

  static async open(options: WitnessOptions): Promise<Witness> {
    await mkdir(options.dir, {recursive: true, mode: 0o700})
    const seed = ed25519SeedFromPem(
      await readOrCreate(path.join(options.dir, WITNESS_KEY_FILE), () => ed25519SeedToPem(ed25519Generate().seed)),
    )
    const signer = cosignatureSigner(options.name, ed25519FromSeed(seed), options.now)
    const verifiers = new Map(
      [...options.logs].map(([origin, keys]) => [origin, keys.map((key) => ed25519NoteVerifier(key))]),
    )
    const stateText = await readFile(path.join(options.dir, WITNESS_STATE_FILE), 'utf8').catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return '{}'
        throw error
      },
    )
    return new Witness(options, signer, verifiers, JSON.parse(stateText) as Record<string, LogState>)
  }

  /** The witness's verifier key `<name>+<key id>+<base64(0x04 || public key)>`, for logs and auditors. */
  get verifierKey(): string {
    return cosignatureVerifierKey(this.signer.name, this.signer.publicKey)
  }

  /** The size and base64 root last cosigned for `origin`. */
  stateOf(origin: string): LogState | undefined {
    return this.state[origin]
  }

  /** Handles one request body; requests run one at a time, so check and update are atomic. */
  addCheckpoint(body: string): Promise<WitnessAnswer> {
    const answer = this.queue.then(() => this.add(body))
    this.queue = answer.catch(() => undefined)
    return answer
  }

  private async add(body: string): Promise<WitnessAnswer> {
    let request
    let checkpoint
    let text
    try {
      request = parseAddCheckpoint(body)
      checkpoint = parseCheckpoint(request.note.slice(0, Math.max(0, request.note.lastIndexOf('\n\n') + 1)))
    } catch (error) {
      if (error instanceof AddCheckpointError || error instanceof CheckpointError) return plain(400, error.message)
      throw error
    }
    const verifiers = this.verifiers.get(checkpoint.origin)
    if (!verifiers) return plain(404, `unknown log origin ${checkpoint.origin}`)
    try {
      text = openNote(request.note, verifiers).text
    } catch (error) {
      if (!(error instanceof NoteError)) throw error
      return error.code === 'malformed'
        ? plain(400, error.message)
        : plain(403, `the checkpoint is not signed by a trusted key of ${checkpoint.origin}: ${error.message}`)
    }
    if (request.oldSize > checkpoint.size)
      return plain(400, `old size ${request.oldSize} is above the checkpoint size ${checkpoint.size}`)
    const held = this.state[checkpoint.origin] ?? {size: 0, root: ''}
    if (request.oldSize !== held.size) return {status: 409, contentType: SIZE_MEDIA_TYPE, body: `${held.size}\n`}
    const root = Buffer.from(checkpoint.root).toString('base64')
    if (request.oldSize === checkpoint.size && held.size > 0) {
      if (root !== held.root)
        return plain(409, `a checkpoint of size ${held.size} with another root was already cosigned`)
    } else if (held.size > 0) {
      try {
        verifyConsistency(held.size, checkpoint.size, Buffer.from(held.root, 'base64'), checkpoint.root, request.proof)
      } catch (error) {
        if (error instanceof MerkleError)
          return plain(422, `the consistency proof from size ${held.size} does not verify: ${error.message}`)
        throw error
      }
    } else if (request.proof.length > 0) {
      return plain(422, 'the consistency proof from size 0 must be empty')
    }
    await this.persist({...this.state, [checkpoint.origin]: {size: checkpoint.size, root}})
    return {status: 200, contentType: 'text/plain; charset=utf-8', body: signatureLine(text, this.signer)}
  }

  /** Writes the new state to a temporary file, syncs it and renames it over the old one. */
  private async persist(next: Record<string, LogState>): Promise<void> {
    const file = path.join(this.options.dir, WITNESS_STATE_FILE)
    const temporary = `${file}.tmp`
    const handle = await open(temporary, 'w', 0o600)
    try {
      await handle.writeFile(`${JSON.stringify(next, null, 2)}\n`)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temporary, file)
    const dir = await open(this.options.dir, 'r')
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
    this.state = next
  }
}

function plain(status: WitnessAnswer['status'], message: string): WitnessAnswer {
  return {status, contentType: 'text/plain; charset=utf-8', body: `${message}\n`}
}

/**
 * A key file created once: written and synced under a temporary name, then hard-linked into place,
 * which fails when the file exists, so a crash never leaves half a key and a racing creator
 * reads the winner's.
 */
async function readOrCreate(file: string, create: () => string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const temporary = `${file}.${process.pid}.tmp`
  const handle = await open(temporary, 'w', 0o600)
  try {
    await handle.writeFile(create())
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await link(temporary, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    await unlink(temporary)
  }
  return readFile(file, 'utf8')
}
