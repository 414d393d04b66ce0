/**
 * GET /v1/export and `audit-trail export`: writes the evidence package (CONTRACT.md section 5) to
 * a stream as it reads events, so a large export never becomes one giant string. The package
 * covers the tree as it was when the export started; events recorded meanwhile are left out.
 */
import {once} from 'node:events'
import type {Writable} from 'node:stream'
import {ChainSpanCollector, PACKAGE_FORMAT, PACKAGE_VERSION} from '../core/evidence/package.js'
import type {MerkleTree} from '../core/merkle/index.js'
import type {EventFilter, TimestampRecord} from '../core/types.js'
import type {EventStore} from '../store/store.js'

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

export interface TimestampSource {
  latestAtOrBefore(treeSize: number): Promise<TimestampRecord | undefined>
  trustAnchorsPem(): Promise<string[]>
}

export class ExportService {
  constructor(private readonly options: {store: EventStore; tree: MerkleTree; timestamps?: TimestampSource}) {}

  /** `audit-trail-<UTC stamp>.atrail.json` */
  static fileName(now: Date = new Date()): string {
    return `audit-trail-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}.atrail.json`
  }

  async writePackage(filter: EventFilter, out: Writable, now: Date = new Date()): Promise<{events: number; tree_size: number}> {
    const {store, tree, timestamps} = this.options
    const size = tree.size
    const write = async (text: string) => {
      if (!out.write(text)) await once(out, 'drain')
    }
    await write(`{"format":${JSON.stringify(PACKAGE_FORMAT)},"version":${PACKAGE_VERSION},"generated_at":${JSON.stringify(now.toISOString())},` +
      `"filters":${JSON.stringify(filter)},"merkle":{"algorithm":"rfc9162-sha256","tree_size":${size},"root":"${hex(tree.rootAt(size))}"},\n"events":[`)
    const spans = new ChainSpanCollector()
    const ids: string[] = []
    const indexes: number[] = []
    for await (const event of store.scanEvents({filter, toIndex: size})) {
      await write(`${ids.length === 0 ? '\n' : ',\n'}${JSON.stringify(event)}`)
      spans.add(event)
      ids.push(event.id)
      indexes.push(event.index)
    }
    await write(`\n],\n"chains":${JSON.stringify(spans.toObject())},\n"proofs":{`)
    for (let i = 0; i < ids.length; i++) {
      const path = tree.inclusionProof(indexes[i]!, size).map(hex)
      await write(`${i === 0 ? '\n' : ',\n'}${JSON.stringify(ids[i])}:{"leaf_index":${indexes[i]},"audit_path":${JSON.stringify(path)}}`)
    }
    const latest = await timestamps?.latestAtOrBefore(size)
    const timestamp = latest ? {...latest, consistency_proof: tree.consistencyProof(latest.tree_size, size).map(hex)} : null
    const certificates = latest && timestamps ? await timestamps.trustAnchorsPem() : []
    await write(`\n},\n"timestamp":${JSON.stringify(timestamp)},\n"tsa_certificates":${JSON.stringify(certificates)}}\n`)
    return {events: ids.length, tree_size: size}
  }
}
