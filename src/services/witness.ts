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
import {cosignatureSigner, cosignatureVerifierKey, type CosignatureSigner} from '../core/checkpoint/index.js'
import {ed25519FromSeed, ed25519Generate, ed25519SeedFromPem, ed25519SeedToPem} from '../core/crypto.js'
import {ed25519NoteVerifier, signatureLine, type NoteVerifier} from '../core/note/index.js'
import {SIZE_MEDIA_TYPE} from '../core/witness/add-checkpoint-body.js'
import {judgeAddCheckpoint, type WitnessedTree} from '../core/witness/judge.js'

const WITNESS_KEY_FILE = 'witness.key'
export const WITNESS_STATE_FILE = 'state.json'

interface WitnessAnswer {
  status: 200 | 400 | 403 | 404 | 409 | 422
  contentType: string
  body: string
}

type LogState = WitnessedTree

interface WitnessOptions {
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
    const verdict = judgeAddCheckpoint(
      body,
      (origin) => this.verifiers.get(origin),
      (origin) => this.state[origin],
    )
    if (!verdict.accepted) {
      if (verdict.status === 409 && verdict.heldSize !== undefined)
        return {status: 409, contentType: SIZE_MEDIA_TYPE, body: `${verdict.heldSize}\n`}
      return plain(verdict.status, verdict.message)
    }
    await this.persist({...this.state, [verdict.origin]: {size: verdict.size, root: verdict.root}})
    return {status: 200, contentType: 'text/plain; charset=utf-8', body: signatureLine(verdict.text, this.signer)}
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
