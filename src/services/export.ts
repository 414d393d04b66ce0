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
    const {store, tree, timestamps} = this.options
    const redact = options.redact ?? []
    // The timestamps are read before the size: each was issued over a tree no larger than the
    // current one, unless the log was cut short while stopped; then the latest is still the
    // package's, and its tree, larger than the package's, fails the package's consistency check.
    const latestIssued = await timestamps?.latest()
    const receipts = options.receipts ? await this.#receiptSource().forPackage() : undefined
    const [rootHex, size] = await tree.read(
      (t, size) => [toHex(t.rootAt(size)), size] as const,
      receipts?.checkpoint.tree_size,
    )
    // Text is handed to the stream in chunks of about WRITE_CHUNK characters: one write per
    // event and per proof made the stream's own bookkeeping cost as much as the rest.
    let pending = ''
    const write = async (text: string) => {
      pending += text
      if (pending.length < WRITE_CHUNK) return
      const chunk = pending
      pending = ''
      if (!out.write(chunk)) await once(out, 'drain')
    }
    await write(
      `{"format":${JSON.stringify(PACKAGE_FORMAT)},` +
        `"generated_at":${JSON.stringify(now.toISOString())},` +
        `"filters":${JSON.stringify(filter)},"merkle":{"algorithm":"rfc9162-sha256","tree_size":${size},` +
        `"root":"${rootHex}"},\n"events":[`,
    )
    const spans = new ChainSpanCollector()
    const ids: string[] = []
    const indexes: number[] = []
    // Known only once every event is written: the package's last member (docs/verification.md 1).
    let version: PackageVersion = 1
    const erasureIds = new Set<string>()
    for await (const stored of store.scanEvents({filter, toIndex: size})) {
      for (const id of erasureIdsOf(stored)) erasureIds.add(id)
      const event = redact.length === 0 ? stored : redactEvent(stored, redact)
      if (version === 1) version = versionFor(event)
      await write(`${ids.length === 0 ? '\n' : ',\n'}${JSON.stringify(event)}`)
      spans.add(event)
      ids.push(event.id)
      indexes.push(event.index)
    }
    await write(`\n],\n"chains":${JSON.stringify(spans.toObject())},\n"proofs":{`)
    for (let from = 0; from < ids.length; from += PROOF_WINDOW) {
      const batch = indexes.slice(from, from + PROOF_WINDOW)
      const paths = await tree.read((t) => batch.map(t.inclusionProofsHex(size)), size)
      for (let i = from; i < from + batch.length; i++) {
        const path = paths[i - from]!
        await write(
          `${i === 0 ? '\n' : ',\n'}${JSON.stringify(ids[i])}:{"leaf_index":${indexes[i]},` +
            `"audit_path":${path.length === 0 ? '[]' : `["${path.join('","')}"]`}}`,
        )
      }
    }
    if (receipts) await this.#writeReceipts(write, receipts.sign, ids, indexes, size)
    const latest = latestIssued
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
    pending += `\n},\n"timestamp":${JSON.stringify(timestamp)},\n"tsa_certificates":${JSON.stringify(certificates)},`
    const keys = await packageKeyEntries(store, tree, size)
    const erasures = await this.#erasures(erasureIds, size)
    pending += `\n"checkpoint":${JSON.stringify(checkpoint)},\n"keys":${JSON.stringify(keys)},`
    pending += `\n"erasures":${JSON.stringify(erasures)},`
    pending += `\n"version":${version}}\n`
    if (!out.write(pending)) await once(out, 'drain')
    return {events: ids.length, tree_size: size}
  }

  #receiptSource(): ReceiptSource {
    if (!this.options.receipts) throw new AuditError('validation_error', 'this export has no log key to sign receipts')
    return this.options.receipts
  }

  /** Closes `proofs` and opens `"receipts": {"<event id>": "<base64 COSE_Sign1>", ...` (closed as proofs were). */
  async #writeReceipts(
    write: (text: string) => Promise<void>,
    sign: TreeReceiptSigner,
    ids: string[],
    indexes: number[],
    size: number,
  ): Promise<void> {
    await write(`\n},\n"receipts":{`)
    for (let from = 0; from < ids.length; from += PROOF_WINDOW) {
      const batch = indexes.slice(from, from + PROOF_WINDOW)
      const paths = await this.options.tree.read((t) => batch.map(t.inclusionProofsHex(size)), size)
      for (let i = from; i < from + batch.length; i++) {
        const receipt = packageReceipt(sign, {index: indexes[i]!}, paths[i - from]!)
        await write(`${i === 0 ? '\n' : ',\n'}${JSON.stringify(ids[i])}:"${receipt}"`)
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
