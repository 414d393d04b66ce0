/**
 * COSE Receipts (RFC 9942) for the log's events, signed with the log's Ed25519 key (the key of
 * the C2SP checkpoints), and the key as a COSE Key Set (docs/verification.md, "Receipts").
 *
 * Every receipt is over a prefix of a tree the log signed a checkpoint for: by default the latest
 * checkpoint's tree; when it does not hold the event yet (or a larger tree_size is asked for), a
 * checkpoint of the current tree is signed first, no sooner than a second after the previous one
 * (docs/checkpoints.md, "Checkpoints"). So a receipt never signs a root that the log's signed history, proven to
 * extend at every checkpoint and shown to witnesses, does not contain.
 */
import {coseKeyThumbprint, ed25519CoseKey, encodeCbor, encodeKeySet, treeReceipts} from '../core/cose/index.js'
import {AuditError} from '../core/errors.js'
import {toHex} from '../core/hex.js'
import {parseVerifierKey} from '../core/note/index.js'
import type {CheckpointRecord, StoredEvent} from '../core/types.js'
import type {EventStore} from '../store/store.js'
import type {CheckpointService} from './checkpoints.js'
import type {TreeReads, TreeView} from './tree-view.js'

/** The least time between two checkpoints (docs/checkpoints.md: at most one a second). */
const CHECKPOINT_INTERVAL_MS = 1000

interface IssuedReceipt {
  event_id: string
  leaf_index: number
  tree_size: number
  /** The root the receipt signs (its detached payload), hex. */
  root: string
  receipt: Buffer
}

/** The receipts of one tree (size, root) of the log, by leaf index and path (core/cose treeReceipts). */
export type TreeReceiptSigner = (leafIndex: number, path: readonly Uint8Array[]) => Buffer

/** Trees whose signed parts are kept: the latest checkpoint's, and a few asked for with tree_size. */
const KEPT_TREES = 8

interface LogSigner {
  kid: Buffer
  issuer: string
  publicKey: Buffer
  sign: (toBeSigned: Uint8Array) => Uint8Array
}

interface ReceiptServiceOptions {
  store: EventStore
  tree: TreeView
  checkpoints: CheckpointService
  now?: () => number
}

const treeKey = (size: number, root: Uint8Array) => `${size}:${toHex(root)}`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export class ReceiptService {
  #signer: Promise<LogSigner> | undefined
  /** By `<size>:<root hex>`: one signature serves every leaf of a tree (RFC 9942 signs the root). */
  readonly #trees = new Map<string, TreeReceiptSigner>()

  constructor(private readonly options: ReceiptServiceOptions) {}

  /** The log key as a signer; the kid is its RFC 9679 thumbprint, the issuer the log's origin. */
  signer(): Promise<LogSigner> {
    return (this.#signer ??= this.options.checkpoints.identity().then(
      (identity) => {
        const publicKey = parseVerifierKey(identity.verifierKey).publicKey
        return {kid: coseKeyThumbprint(publicKey), issuer: identity.origin, publicKey, sign: identity.signer.sign}
      },
      (error: unknown) => {
        this.#signer = undefined
        throw error
      },
    ))
  }

  /** GET /.well-known/scitt-keys: the COSE Key Set of the log key. */
  async keySet(): Promise<Buffer> {
    return Buffer.from(encodeKeySet([(await this.signer()).publicKey]))
  }

  /** GET /.well-known/scitt-keys/<kid>: the COSE_Key whose kid (base64url) is `kid`, if it is the log's. */
  async coseKey(kid: string): Promise<Buffer | undefined> {
    const signer = await this.signer()
    return signer.kid.toString('base64url') === kid
      ? Buffer.from(encodeCbor(ed25519CoseKey(signer.publicKey)))
      : undefined
  }

  /**
   * The receipt of the event `eventId` in the tree of `treeSize` leaves (default: the latest
   * checkpoint's). 404 for an unknown event, 400 for a tree_size that does not hold it.
   */
  async forEvent(eventId: string, treeSize?: number): Promise<IssuedReceipt> {
    const event = await this.options.store.getEvent(eventId.toLowerCase())
    if (!event) throw new AuditError('not_found', `no event with id ${eventId}`)
    const current = await this.options.tree.size()
    if (treeSize !== undefined && (!Number.isSafeInteger(treeSize) || treeSize <= event.index || treeSize > current)) {
      const message = `must be an integer from ${event.index + 1} (the event is leaf ${event.index}) to ${current}`
      throw new AuditError('validation_error', `tree_size ${message}`, {details: [{field: 'tree_size', message}]})
    }
    const checkpoint = await this.checkpointCovering(treeSize ?? event.index + 1)
    const size = treeSize ?? checkpoint.tree_size
    const read = (tree: TreeReads) => [tree.inclusionProof(event.index, size), tree.rootAt(size)] as const
    // A root already signed for was checked against its checkpoint then: the path leads to it.
    let [path, root] = await this.options.tree.read(read, size)
    let signer = this.#trees.get(treeKey(size, root))
    if (!signer) {
      ;[path, root] = await this.#readSigned(checkpoint, read)
      signer = await this.#treeSigner(size, root)
    }
    const receipt = signer(event.index, path)
    return {event_id: event.id, leaf_index: event.index, tree_size: size, root: toHex(root), receipt}
  }

  /**
   * For an evidence package: a checkpoint of the whole current tree (signed now if the tree grew)
   * and a signer of receipts for its tree, whose root is checked against the checkpoint's.
   */
  async forPackage(): Promise<{checkpoint: CheckpointRecord; sign: TreeReceiptSigner}> {
    const checkpoint = await this.checkpointCovering(await this.options.tree.size())
    const [root] = await this.#readSigned(checkpoint, (tree) => [tree.rootAt(checkpoint.tree_size)])
    return {checkpoint, sign: await this.#treeSigner(checkpoint.tree_size, root)}
  }

  async #treeSigner(size: number, root: Uint8Array): Promise<TreeReceiptSigner> {
    const key = treeKey(size, root)
    let signer = this.#trees.get(key)
    if (!signer) {
      signer = treeReceipts(size, root, await this.signer())
      if (this.#trees.size >= KEPT_TREES) this.#trees.delete(this.#trees.keys().next().value!)
      this.#trees.set(key, signer)
    }
    return signer
  }

  /**
   * The latest checkpoint of the log's origin if it has at least `size` leaves; otherwise one of
   * the current tree, signed once a second has passed since the latest.
   */
  async checkpointCovering(size: number): Promise<CheckpointRecord> {
    const {checkpoints} = this.options
    const origin = (await checkpoints.identity()).origin
    const now = this.options.now ?? Date.now
    for (let attempt = 0; attempt < 3; attempt++) {
      const latest = await checkpoints.latest()
      const ours = latest?.note.startsWith(`${origin}\n`) ? latest : undefined
      if (ours && ours.tree_size >= size) return ours
      const wait = ours ? Date.parse(ours.signed_at) + CHECKPOINT_INTERVAL_MS - now() : 0
      if (wait > 0) await sleep(Math.min(wait, CHECKPOINT_INTERVAL_MS))
      await checkpoints.signIfGrown()
    }
    throw new AuditError('internal_error', `no checkpoint of at least ${size} events could be signed`)
  }

  /**
   * Runs `op` on the stored tree after checking that its root at the checkpoint's size is the
   * root the checkpoint signed; a store changed since is refused as checkpoints refuse it.
   */
  async #readSigned<T extends readonly unknown[]>(
    checkpoint: CheckpointRecord,
    op: (tree: TreeReads) => T,
  ): Promise<T> {
    if (checkpoint.tree_size > (await this.options.tree.size()))
      throw new AuditError(
        'conflict',
        `refusing to sign a receipt: the store holds fewer events than its last checkpoint`,
      )
    const [rootHex, result] = await this.options.tree.read(
      (tree) => [toHex(tree.rootAt(checkpoint.tree_size)), op(tree)] as const,
      checkpoint.tree_size,
    )
    if (rootHex !== checkpoint.root) {
      throw new AuditError(
        'conflict',
        `refusing to sign a receipt: the stored tree of ${checkpoint.tree_size} events no longer has the root ` +
          `of the checkpoint signed at ${checkpoint.signed_at}`,
      )
    }
    return result
  }
}

/** The receipt of an event as a package entry: base64 of the COSE_Sign1 bytes. */
export function packageReceipt(sign: TreeReceiptSigner, event: Pick<StoredEvent, 'index'>, path: string[]): string {
  return sign(
    event.index,
    path.map((hash) => Buffer.from(hash, 'hex')),
  ).toString('base64')
}
