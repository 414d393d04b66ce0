/**
 * GET /v1/export and `audit-trail export`: writes the evidence package (docs/verification.md) to
 * a stream as it reads events, so a large export never becomes one giant string. The package
 * covers the tree as it was when the export started; events recorded meanwhile are left out.
 */
import {once} from 'node:events'
import type {Writable} from 'node:stream'
import {ChainSpanCollector, PACKAGE_FORMAT, versionFor, type PackageVersion} from '../core/evidence/package.js'
import type {CheckpointRecord, EventFilter, PayloadMemberName, TimestampRecord} from '../core/types.js'
import {erasureIdsOf, redactEvent} from '../core/erasure/index.js'
import type {PackageErasure} from '../core/evidence/types.js'
import {AuditError} from '../core/errors.js'
import type {EventStore} from '../store/store.js'
import type {TreeView} from './tree-view.js'
import {packageReceipt, type TreeReceiptSigner} from './receipts.js'
import {packageKeyEntries} from './package-keys.js'
import {toHex} from '../core/hex.js'

/** Characters collected before a write to the output stream. */
const WRITE_CHUNK = 1 << 20
/** Audit paths computed per read of the tree: bounds what a tiled tree holds for one export. */
const PROOF_WINDOW = 16_384

interface TimestampSource {
  latest(): Promise<TimestampRecord | undefined>
  trustAnchorsPem(): Promise<string[]>
}

interface CheckpointSource {
  latestAtOrBefore(treeSize: number): Promise<CheckpointRecord | undefined>
}

/** Receipts for the package (`--receipts`): a checkpoint of the tree, and a signer for that tree. */
interface ReceiptSource {
  forPackage(): Promise<{checkpoint: CheckpointRecord; sign: TreeReceiptSigner}>
}

/** What writing the events learnt, for the members after them. */
interface WrittenEvents {
  spans: ChainSpanCollector
  ids: string[]
  indexes: number[]
  /** Known only once every event is written: the package's last member (docs/verification.md 1). */
  version: PackageVersion
  /** The erasure events the package's events name. */
  erasureIds: Set<string>
}

/**
 * Text handed to the stream in chunks of about WRITE_CHUNK characters: one write per event and
 * per proof made the stream's own bookkeeping cost as much as the rest.
 */
class ChunkedOutput {
  readonly #out: Writable
  #pending = ''

  constructor(out: Writable) {
    this.#out = out
  }

  async write(text: string): Promise<void> {
    this.#pending += text
    if (this.#pending.length < WRITE_CHUNK) return
    const chunk = this.#pending
    this.#pending = ''
    if (!this.#out.write(chunk)) await once(this.#out, 'drain')
  }

  /** Writes what is pending and the package's last `text`. */
  async end(text: string): Promise<void> {
    if (!this.#out.write(this.#pending + text)) await once(this.#out, 'drain')
    this.#pending = ''
  }
}

export class ExportService {
  constructor(
    private readonly options: {
      store: EventStore
      tree: TreeView
      timestamps?: TimestampSource
      checkpoints?: CheckpointSource
      receipts?: ReceiptSource
    },
  ) {}

  /** `audit-trail-<UTC stamp>.atrail.json` */
  static fileName(now: Date = new Date()): string {
    return `audit-trail-${now
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d+Z$/, 'Z')}.atrail.json`
  }

  /**
   * With `receipts`, the package covers the tree of a checkpoint signed for it (the current tree)
   * and carries a COSE Receipt per event, over that tree (docs/verification.md 9).
   * With `redact`: payload members withheld from every event that holds them (docs/verification.md
   * 11, `redacted`), but never what verification needs: nothing of a service event (the erasure
   * events' coverage is what erased members are checked against), nor a statement's only signer.
   */
  async writePackage(
    filter: EventFilter,
    out: Writable,
    now: Date = new Date(),
    options: {receipts?: boolean; redact?: readonly PayloadMemberName[]} = {},
  ): Promise<{events: number; tree_size: number}> {
    const {tree, timestamps} = this.options
    // The timestamps are read before the size: each was issued over a tree no larger than the
    // current one, unless the log was cut short while stopped; then the latest is still the
    // package's, and its tree, larger than the package's, fails the package's consistency check.
    const latestIssued = await timestamps?.latest()
    const receipts = options.receipts ? await this.#receiptSource().forPackage() : undefined
    const [rootHex, size] = await tree.read(
      (t, size) => [toHex(t.rootAt(size)), size] as const,
      receipts?.checkpoint.tree_size,
    )
    const output = new ChunkedOutput(out)
    await output.write(
      `{"format":${JSON.stringify(PACKAGE_FORMAT)},` +
        `"generated_at":${JSON.stringify(now.toISOString())},` +
        `"filters":${JSON.stringify(filter)},"merkle":{"algorithm":"rfc9162-sha256","tree_size":${size},` +
        `"root":"${rootHex}"},\n"events":[`,
    )
    const events = await this.#writeEvents(output, filter, size, options.redact ?? [])
    await output.write(`\n],\n"chains":${JSON.stringify(events.spans.toObject())},\n"proofs":{`)
    await this.#writeProofs(output, events.ids, events.indexes, size)
    if (receipts) await this.#writeReceipts(output, receipts.sign, events.ids, events.indexes, size)
    await output.end(await this.#packageEnd(latestIssued, size, events))
    return {events: events.ids.length, tree_size: size}
  }

  /** The events of the package, each as stored (or redacted), in index order. */
  async #writeEvents(
    output: ChunkedOutput,
    filter: EventFilter,
    size: number,
    redact: readonly PayloadMemberName[],
  ): Promise<WrittenEvents> {
    const written: WrittenEvents = {
      spans: new ChainSpanCollector(),
      ids: [],
      indexes: [],
      version: 1,
      erasureIds: new Set(),
    }
    for await (const stored of this.options.store.scanEvents({filter, toIndex: size})) {
      for (const id of erasureIdsOf(stored)) written.erasureIds.add(id)
      const event = redact.length === 0 ? stored : redactEvent(stored, redact)
      if (written.version === 1) written.version = versionFor(event)
      await output.write(`${written.ids.length === 0 ? '\n' : ',\n'}${JSON.stringify(event)}`)
      written.spans.add(event)
      written.ids.push(event.id)
      written.indexes.push(event.index)
    }
    return written
  }

  /** `"<event id>": {"leaf_index": i, "audit_path": [...]}` for each event, in the package's tree. */
  async #writeProofs(output: ChunkedOutput, ids: string[], indexes: number[], size: number): Promise<void> {
    for (let from = 0; from < ids.length; from += PROOF_WINDOW) {
      const batch = indexes.slice(from, from + PROOF_WINDOW)
      const paths = await this.options.tree.read((t) => batch.map(t.inclusionProofsHex(size)), size)
      for (let i = from; i < from + batch.length; i++) {
        const path = paths[i - from]!
        await output.write(
          `${i === 0 ? '\n' : ',\n'}${JSON.stringify(ids[i])}:{"leaf_index":${indexes[i]},` +
            `"audit_path":${path.length === 0 ? '[]' : `["${path.join('","')}"]`}}`,
        )
      }
    }
  }

  /** The members after the proofs (or receipts): timestamp, checkpoint, keys, erasures and version. */
  async #packageEnd(latest: TimestampRecord | undefined, size: number, events: WrittenEvents): Promise<string> {
    const {tree, timestamps} = this.options
    const proof =
      latest && latest.tree_size <= size
        ? await tree.read((t) => t.consistencyProof(latest.tree_size, size).map(toHex), size)
        : []
    const timestamp = latest ? {...latest, consistency_proof: proof} : null
    const certificates = latest && timestamps ? await timestamps.trustAnchorsPem() : []
    const signed = await this.options.checkpoints?.latestAtOrBefore(size)
    const checkpoint = signed
      ? {
          note: signed.note + signed.cosignatures.join(''),
          consistency_proof: await tree.read((t) => t.consistencyProof(signed.tree_size, size).map(toHex), size),
        }
      : null
    let text = `\n},\n"timestamp":${JSON.stringify(timestamp)},\n"tsa_certificates":${JSON.stringify(certificates)},`
    const keys = await packageKeyEntries(this.options.store, tree, size)
    const erasures = await this.#erasures(events.erasureIds, size)
    text += `\n"checkpoint":${JSON.stringify(checkpoint)},\n"keys":${JSON.stringify(keys)},`
    text += `\n"erasures":${JSON.stringify(erasures)},`
    return `${text}\n"version":${events.version}}\n`
  }

  #receiptSource(): ReceiptSource {
    if (!this.options.receipts) throw new AuditError('validation_error', 'this export has no log key to sign receipts')
    return this.options.receipts
  }

  /** Closes `proofs` and opens `"receipts": {"<event id>": "<base64 COSE_Sign1>", ...` (closed as proofs were). */
  async #writeReceipts(
    output: ChunkedOutput,
    sign: TreeReceiptSigner,
    ids: string[],
    indexes: number[],
    size: number,
  ): Promise<void> {
    await output.write(`\n},\n"receipts":{`)
    for (let from = 0; from < ids.length; from += PROOF_WINDOW) {
      const batch = indexes.slice(from, from + PROOF_WINDOW)
      const paths = await this.options.tree.read((t) => batch.map(t.inclusionProofsHex(size)), size)
      for (let i = from; i < from + batch.length; i++) {
        const receipt = packageReceipt(sign, {index: indexes[i]!}, paths[i - from]!)
        await output.write(`${i === 0 ? '\n' : ',\n'}${JSON.stringify(ids[i])}:"${receipt}"`)
      }
    }
  }

  /**
   * The erasure events the package's events name, with their inclusion proofs in its tree. An
   * erasure recorded after the package's tree was read, yet applied to events it holds (it ran
   * during the export), cannot be proven in that tree: the export fails rather than write a
   * package that does not verify.
   */
  async #erasures(ids: ReadonlySet<string>, size: number): Promise<PackageErasure[]> {
    if (ids.size === 0) return []
    const found = await this.options.store.getEvents([...ids])
    const events = [...ids].map((id) => found.get(id)).filter((event) => event !== undefined)
    if (events.length < ids.size || events.some((event) => event.index >= size)) {
      throw new AuditError('conflict', 'an erasure ran while the package was written: export again')
    }
    events.sort((a, b) => a.index - b.index)
    const paths = await this.options.tree.read(
      (t) => events.map((event) => t.inclusionProofsHex(size)(event.index)),
      size,
    )
    return events.map((event, i) => ({event, proof: {leaf_index: event.index, audit_path: paths[i]!}}))
  }
}
