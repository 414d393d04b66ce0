import {expect} from 'chai'
import {randomBytes} from 'node:crypto'
import {PassThrough} from 'node:stream'
import {hashLeaf, MerkleTree, verifyInclusion} from '../../src/core/merkle/index.js'
import type {StoredEvent} from '../../src/core/types.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {openPostgresStore} from '../../src/store/index.js'
import {SCHEMA_VERSION} from '../../src/store/postgres/migrations.js'
import {referenceConsistency, referencePath, referenceRoot} from '../core/merkle/reference.js'
import {makeEvent} from '../support/harness.js'
import {postgresPerTest, rowsOf} from '../support/stores.js'

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

/** Events with made-up hashes, one agent each: the tree reads only `hash`, so nothing is hashed. */
function syntheticEvents(from: number, count: number): StoredEvent[] {
  return Array.from({length: count}, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(from + i).padStart(12, '0')}`,
    agent_id: `agent-${from + i}`,
    action_type: 'TOOL_CALL',
    action_name: 'x',
    action_status: 'success',
    timestamp: '2026-11-26T00:00:00.000Z',
    labels: {},
    sequence: 1,
    prev_hash: '0'.repeat(64),
    recorded_at: '2026-11-26T00:00:00.000Z',
    hash: randomBytes(32).toString('hex'),
    index: from + i,
  }))
}

describe('the Merkle tree kept in PostgreSQL', function () {
  let services: AuditServices | undefined

  const fresh = postgresPerTest(async () => {
    await services?.close()
    services = undefined
  })

  const sql = (text: string, params: unknown[] = []) => rowsOf(fresh.url, text, params)

  async function memoryTree(): Promise<MerkleTree> {
    const tree = new MerkleTree()
    for (const hash of await services!.store.eventHashes()) tree.appendHex(hash)
    return tree
  }

  it(
    'answers the root at every size, and every inclusion and ' +
      'consistency proof, as the in-memory tree and RFC 9162',
    async () => {
      services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
      // Group commits of 1, across one and several tile boundaries, and exactly one tile.
      for (const count of [1, 2, 250, 1, 256, 3, 700, 1]) {
        const result = await services.ingest.recordBatch(Array.from({length: count}, () => makeEvent()))
        expect(result.status).to.equal(201)
      }
      const memory = await memoryTree()
      const n = memory.size
      expect(n).to.equal(1214)
      const sizes = Array.from({length: n + 1}, (_, s) => s)
      const roots = await services.tree.read((tree) => sizes.map((s) => hex(tree.rootAt(s))))
      expect(roots).to.deep.equal(sizes.map((s) => hex(memory.rootAt(s))))
      for (const size of [1, 255, 256, 257, 512, 513, 1213, 1214]) {
        // Read at that size: partial tiles are prefixes of the stored rows.
        const paths = await services.tree.read(
          (tree) => sizes.slice(0, size).map((i) => tree.inclusionProof(i, size).map(hex)),
          size,
        )
        expect(paths).to.deep.equal(
          sizes.slice(0, size).map((i) => memory.inclusionProof(i, size).map(hex)),
          `paths at ${size}`,
        )
        const proofs = await services.tree.read(
          (tree) => sizes.slice(0, size + 1).map((m) => tree.consistencyProof(m, size).map(hex)),
          size,
        )
        expect(proofs).to.deep.equal(
          sizes.slice(0, size + 1).map((m) => memory.consistencyProof(m, size).map(hex)),
          `consistency at ${size}`,
        )
      }
      const leaves = (await services.store.eventHashes()).map((h) => Buffer.from(h, 'hex'))
      for (const size of [3, 257, 700]) {
        const D = leaves.slice(0, size)
        const [root, path, proof] = await services.tree.read(
          (tree) =>
            [tree.rootAt(size), tree.inclusionProof(size - 2, size), tree.consistencyProof(size - 1, size)] as const,
          size,
        )
        expect(hex(root)).to.equal(hex(referenceRoot(D)))
        expect(path.map(hex)).to.deep.equal(referencePath(size - 2, D).map(hex))
        expect(proof.map(hex)).to.deep.equal(referenceConsistency(size - 1, D).map(hex))
      }
    },
  )

  it('serves the hash tiles of 256^2 + 1 leaves appended in large commits as the in-memory tree', async function () {
    const store = await openPostgresStore({databaseUrl: fresh.url})
    try {
      for (const [from, count] of [
        [0, 30_000],
        [30_000, 35_535],
        [65_535, 1],
        [65_536, 1],
      ] as const) {
        await store.appendEvents(syntheticEvents(from, count))
      }
    } finally {
      await store.close()
    }
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const memory = await memoryTree()
    expect(memory.size).to.equal(65_537)
    const tiles = await sql('SELECT level, count(*)::int AS n FROM merkle_tiles GROUP BY level ORDER BY level')
    expect(tiles).to.deep.equal([
      {level: 0, n: 257},
      {level: 1, n: 1},
      {level: 2, n: 1},
    ])
    for (const size of [65_535, 65_536, 65_537]) {
      const [root, path, proof] = await services.tree.read(
        (tree) => [tree.rootAt(size), tree.inclusionProof(size - 1, size), tree.consistencyProof(1000, size)] as const,
        size,
      )
      expect(hex(root)).to.equal(hex(memory.rootAt(size)))
      expect(path.map(hex)).to.deep.equal(memory.inclusionProof(size - 1, size).map(hex))
      expect(proof.map(hex)).to.deep.equal(memory.consistencyProof(1000, size).map(hex))
    }
    const tile = await fetchTile(services, '/tlog/tile/1/000')
    expect(tile).to.deep.equal(memory.nodeHashes(8, 0, 256))
  })

  it('exports an audit path for every event, across the runs of paths computed per read, each verifying', async () => {
    const store = await openPostgresStore({databaseUrl: fresh.url})
    try {
      await store.appendEvents(syntheticEvents(0, 10_000))
      await store.appendEvents(syntheticEvents(10_000, 7_000))
    } finally {
      await store.close()
    }
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const out = new PassThrough()
    const chunks: Buffer[] = []
    out.on('data', (chunk: Buffer) => chunks.push(chunk))
    await services.exporter.writePackage({}, out)
    out.end()
    const pkg = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    expect(pkg.merkle).to.include({tree_size: 17_000, root: hex((await memoryTree()).root())})
    const root = Buffer.from(pkg.merkle.root, 'hex')
    for (const event of pkg.events) {
      const {leaf_index, audit_path} = pkg.proofs[event.id]
      const path = audit_path.map((h: string) => Buffer.from(h, 'hex'))
      verifyInclusion(leaf_index, 17_000, hashLeaf(Buffer.from(event.hash, 'hex')), path, root)
    }
    expect(pkg.events).to.have.length(17_000)
  })

  it('builds the tiles of a previous-version database once; a restart reads no event for the root', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    for (const count of [1, 300, 40]) await services.ingest.recordBatch(Array.from({length: count}, () => makeEvent()))
    const expected = await services.integrity.merkleRoot()
    await services.close()
    services = undefined
    // The database as the previous schema version left it: events, no tiles.
    await sql('DROP TABLE merkle_tiles')
    await sql('UPDATE schema_version SET version = 2')

    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    expect(await sql('SELECT version FROM schema_version')).to.deep.equal([{version: SCHEMA_VERSION}])
    expect(await services.integrity.merkleRoot()).to.include({merkle_root: expected.merkle_root, tree_size: 341})
    expect((await services.integrity.consistency(100, 341)).proof).to.deep.equal(
      (await memoryTree()).consistencyProof(100, 341).map(hex),
    )
    await services.close()
    services = undefined

    // A hash changed in an old row behind the service's back: the tree kept in the tiles still
    // answers the signed root, so opening the log did not rebuild it from the events.
    await sql(`UPDATE events SET hash = repeat('0', 64) WHERE "index" = 5`)
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    expect((await services.integrity.merkleRoot()).merkle_root).to.equal(expected.merkle_root)
    expect(hex((await memoryTree()).root())).to.not.equal(expected.merkle_root)
  })
})

async function fetchTile(services: AuditServices, path: string): Promise<Buffer | undefined> {
  const {readTile} = await import('../../src/services/tiles.js')
  const {parseTilePath} = await import('../../src/core/tiles/index.js')
  return readTile(services, parseTilePath(path.slice('/tlog/tile/'.length))!)
}
