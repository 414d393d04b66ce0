/**
 * The log's signed checkpoints (C2SP tlog-checkpoint over signed-note): the log key, signing a
 * checkpoint whenever the tree grew, keeping each one signed, and the note served at
 * GET /tlog/checkpoint with the witness cosignatures the log holds for it.
 */
import {ed25519FromSeed, ed25519Generate, ed25519SeedFromPem, ed25519SeedToPem, sha256Hex} from '../core/crypto.js'
import {formatCheckpoint, isValidOrigin} from '../core/checkpoint/index.js'
import {AuditError} from '../core/errors.js'
import {
  ed25519NoteSigner,
  ed25519NoteVerifier,
  ed25519VerifierKey,
  openNote,
  signNote,
  type NoteSigner,
} from '../core/note/index.js'
import type {CheckpointRecord} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {TreeView} from './tree-view.js'
import type {SignedHistory} from './signed-history.js'
import {toHex} from '../core/hex.js'

interface LogIdentity {
  origin: string
  /** The signed-note verifier key `<origin>+<key id>+<base64(0x01 || public key)>`. */
  verifierKey: string
  signer: NoteSigner
  /** How the origin was chosen: given (`--origin`), the latest checkpoint's, or the key's default. */
  originFrom: 'given' | 'checkpoint' | 'default'
}

/**
 * The log key of the store (created on first use) under `origin`. Without one, the origin the
 * log's latest checkpoint was signed under with that key (the log keeps its name wherever it is
 * stored and whichever command asks), else the default origin
 * `audit-trail.invalid/<first 16 hex digits of SHA-256(public key)>`: stable for the key, and
 * visibly not a real address, so that operators set their own.
 */
export async function openLogIdentity(store: EventStore, origin?: string): Promise<LogIdentity> {
  const pem = await store.logKey(() => ed25519SeedToPem(ed25519Generate().seed))
  let key
  try {
    key = ed25519FromSeed(ed25519SeedFromPem(pem))
  } catch (error) {
    throw new AuditError(
      'storage_unavailable',
      `the log key is not a usable Ed25519 key: ${(error as Error).message}`,
      {cause: error},
    )
  }
  const signed = origin === undefined ? await signedOrigin(store, key.publicKey) : undefined
  const name = origin ?? signed ?? defaultOrigin(key.publicKey)
  const originFrom = origin !== undefined ? 'given' : signed !== undefined ? 'checkpoint' : 'default'
  checkOrigin(name)
  return {
    origin: name,
    verifierKey: ed25519VerifierKey(name, key.publicKey),
    signer: ed25519NoteSigner(name, key),
    originFrom,
  }
}

/** The origin, or a 400 saying what an origin is (C2SP signed-note: a key name has no space and no "+"). */
export function checkOrigin(origin: string): string {
  if (!isValidOrigin(origin) || /[\s+]/.test(origin)) {
    throw new AuditError(
      'validation_error',
      `invalid origin ${JSON.stringify(origin)}: an origin is one line with no spaces and no "+"; give --origin the ` +
        `log's URL without scheme, for example log.example.com/audit`,
    )
  }
  return origin
}

/** The origin of the latest stored checkpoint when `publicKey` signed it under that origin. */
async function signedOrigin(store: EventStore, publicKey: Uint8Array): Promise<string | undefined> {
  const latest = await store.latestCheckpoint()
  if (latest === undefined) return undefined
  const origin = latest.note.slice(0, Math.max(0, latest.note.indexOf('\n')))
  if (!isValidOrigin(origin) || /[\s+]/.test(origin)) return undefined
  try {
    openNote(latest.note, [ed25519NoteVerifier(ed25519VerifierKey(origin, publicKey))])
    return origin
  } catch {
    return undefined
  }
}

function defaultOrigin(publicKey: Uint8Array): string {
  return `audit-trail.invalid/${sha256Hex(publicKey).slice(0, 16)}`
}

const KIND = 'checkpoint'
/** A witness holds the old tree for good: a restored log starts a new one, under another origin. */
const REMEDY =
  'if the data directory was restored on purpose, start a new log under another --origin (docs/checkpoints.md)'

interface CheckpointServiceOptions {
  store: EventStore
  tree: TreeView
  /** Proves that a tree to be signed extends the last checkpoint (signed-history.ts). */
  history: SignedHistory
  /** The origin (`serve --origin`); default: defaultOrigin of the log key. */
  origin?: string
  now?: () => Date
  /** Called with each newly signed checkpoint (the witness clients). */
  onSigned?: (record: CheckpointRecord) => void
}

export class CheckpointService {
  private signing: Promise<CheckpointRecord | undefined> | undefined
  private opened: Promise<LogIdentity> | undefined

  constructor(private readonly options: CheckpointServiceOptions) {}

  /** The log identity; the key is created on first use, not by every command that opens a store. */
  identity(): Promise<LogIdentity> {
    return (this.opened ??= openLogIdentity(this.options.store, this.options.origin).catch((error: unknown) => {
      this.opened = undefined
      throw error
    }))
  }

  async verifierKey(): Promise<string> {
    return (await this.identity()).verifierKey
  }

  latest(): Promise<CheckpointRecord | undefined> {
    return this.options.store.latestCheckpoint()
  }

  /** The latest checkpoint of at most `treeSize` leaves (for the evidence package). */
  async latestAtOrBefore(treeSize: number): Promise<CheckpointRecord | undefined> {
    // The configured origin, else the one the log signed under last: an export does not create the key.
    const all = await this.options.store.listCheckpoints()
    const origin = this.options.origin ?? all.at(-1)?.note.slice(0, all.at(-1)!.note.indexOf('\n'))
    return all.filter((c) => c.tree_size <= treeSize && c.note.startsWith(`${origin}\n`)).at(-1)
  }

  /**
   * Signs the current tree when it grew since the latest checkpoint (or none was signed under this
   * origin yet); concurrent calls share one signing. Resolves to the new record, or undefined when
   * there was nothing to sign.
   */
  signIfGrown(): Promise<CheckpointRecord | undefined> {
    this.signing ??= this.signNow().finally(() => {
      this.signing = undefined
    })
    return this.signing
  }

  /** The signed note GET /tlog/checkpoint serves, with its cosignatures; signs a first one if none exists. */
  async servedNote(): Promise<string> {
    const latest = (await this.latest()) ?? (await this.signIfGrown())
    if (!latest) throw new AuditError('internal_error', 'no checkpoint could be signed')
    return noteWithCosignatures(latest)
  }

  private async signNow(): Promise<CheckpointRecord | undefined> {
    const {store, tree, history} = this.options
    const identity = await this.identity()
    // Signed history is per origin: another origin is another log to its witnesses.
    const previous = (await store.listCheckpoints()).filter((c) => c.note.startsWith(`${identity.origin}\n`)).at(-1)
    const [root, size] = await tree.read((t, size) => [t.rootAt(size), size] as const)
    if (previous && size === previous.tree_size && toHex(root) === previous.root) return undefined
    const statements = previous
      ? [{kind: KIND, tree_size: previous.tree_size, root: previous.root, signed_at: previous.signed_at}]
      : []
    await history.assertExtends(KIND, statements, size, REMEDY)
    const note = signNote(formatCheckpoint({origin: identity.origin, size, root, extensions: []}), [identity.signer])
    const record: CheckpointRecord = {
      tree_size: size,
      root: toHex(root),
      note,
      cosignatures: [],
      signed_at: (this.options.now?.() ?? new Date()).toISOString(),
    }
    await store.appendCheckpoint(record)
    this.options.onSigned?.(record)
    return record
  }
}

/** The log-signed note followed by the witness cosignature lines held for it. */
export function noteWithCosignatures(record: CheckpointRecord): string {
  return record.note + record.cosignatures.join('')
}
