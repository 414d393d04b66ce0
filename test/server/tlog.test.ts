import {expect} from 'chai'
import {parseCheckpoint} from '../../src/core/checkpoint/index.js'
import {sha256} from '../../src/core/crypto.js'
import {hashChildren, hashLeaf} from '../../src/core/merkle/index.js'
import {ed25519NoteVerifier, openNote} from '../../src/core/note/index.js'
import {formatTilePath} from '../../src/core/tiles/index.js'
import {makeEvent, startTestApi, type TestApi} from '../support/harness.js'
import {describeOnTrails, startApiOn, urlOf} from '../support/trails.js'

/**
 * A tlog-tiles client that knows nothing but the tiles: the hashes at tile level L for a tree of
 * `size` leaves, read from full tiles and the one partial tile the size needs.
 */
async function hashesFromTiles(
  fetchTile: (path: string) => Promise<Buffer>,
  level: number,
  size: number,
): Promise<Buffer[]> {
  const count = Math.floor(size / 256 ** level)
  const hashes: Buffer[] = []
  for (let index = 0; index * 256 < count; index++) {
    const width = Math.min(256, count - index * 256)
    const tile = await fetchTile(formatTilePath({level, index, width}))
    expect(tile.length, `tile ${level}/${index}.p/${width}`).to.equal(width * 32)
    for (let i = 0; i < width; i++) hashes.push(tile.subarray(i * 32, i * 32 + 32))
  }
  return hashes
}

/**
 * RFC 9162 2.1.1 MTH over leaves [start, start + n), taking whole 256^L subtrees from level L tiles.
 * `memo` keeps subtrees already computed: every tree size shares them (the log is append-only).
 */
function treeHash(levels: Buffer[][], start: number, n: number, memo?: Map<string, Uint8Array>): Uint8Array {
  for (let level = levels.length - 1; level >= 0; level--) {
    const width = 256 ** level
    if (n === width && start % width === 0) return levels[level]![start / width]!
  }
  const known = memo?.get(`${start}:${n}`)
  if (known) return known
  let k = 1
  while (k * 2 < n) k *= 2
  const hash = hashChildren(treeHash(levels, start, k, memo), treeHash(levels, start + k, n - k, memo))
  memo?.set(`${start}:${n}`, hash)
  return hash
}

describeOnTrails('C2SP tlog-tiles and checkpoint endpoints', function (trail) {
  this.timeout(120_000)
  let api: TestApi
  const SIZE = 2100
  const cache = new Map<string, Buffer>()
  const fetchTile = async (path: string) => {
    let tile = cache.get(path)
    if (!tile) {
      const response = await fetch(urlOf(api, `/tlog/${path}`))
      expect(response.status, path).to.equal(200)
      expect(response.headers.get('content-type')).to.equal('application/octet-stream')
      expect(response.headers.get('cache-control')).to.match(/immutable/)
      tile = Buffer.from(await response.arrayBuffer())
      cache.set(path, tile)
    }
    return tile
  }

  before(async () => {
    api = await startApiOn(trail)
    for (let done = 0; done < SIZE; done += 1000) {
      const batch = Array.from({length: Math.min(1000, SIZE - done)}, (_, i) =>
        makeEvent({action_name: `step-${done + i}`}),
      )
      expect((await api.request('POST', '/v1/batch', {body: batch})).status).to.equal(201)
    }
  })
  after(async () => {
    await api.close()
  })

  it('gives, for every tree size up to a few thousand, the root GET /v1/merkle serves, from tiles alone', async () => {
    const current = (await api.request('GET', '/v1/merkle/root')).body
    expect(current.tree_size).to.equal(SIZE)
    const memo = new Map<string, Uint8Array>()
    for (let size = 1; size <= SIZE; size++) {
      const levels = [await hashesFromTiles(fetchTile, 0, size)]
      if (size >= 256) levels.push(await hashesFromTiles(fetchTile, 1, size))
      const fromTiles = Buffer.from(treeHash(levels, 0, size, memo)).toString('hex')
      // The root the service gives for that size: over HTTP at the boundaries, else the same service call.
      const overHttp = size === SIZE || size % 256 <= 1 || size % 256 === 255
      const served =
        size === SIZE
          ? current.merkle_root
          : overHttp
            ? (await api.request('GET', `/v1/merkle/consistency?first=${size}&second=${size}`)).body.first_root
            : (await api.services.integrity.consistency(size, size)).first_root
      expect(fromTiles, `size ${size}`).to.equal(served)
    }
  })

  it('serves a level 1 tile whose hashes are the roots of the full level 0 tiles', async () => {
    const level1 = await fetchTile('tile/1/000.p/8')
    for (let i = 0; i < 8; i++) {
      const leaves = await hashesFromTiles(
        async (path) => fetchTile(path.replace(/^tile\/0\/000/, `tile/0/${String(i).padStart(3, '0')}`)),
        0,
        256,
      )
      expect(Buffer.from(treeHash([leaves], 0, 256)).toString('hex')).to.equal(
        level1.subarray(i * 32, i * 32 + 32).toString('hex'),
      )
    }
  })

  it('serves entry bundles of uint16-length-prefixed event hashes that hash to the level 0 tile', async () => {
    const bundle = await fetchTile('tile/entries/001')
    const tile = await fetchTile('tile/0/001')
    expect(bundle.length).to.equal(256 * 34)
    const first = (await api.request('GET', '/v1/events?limit=1&offset=256')).body
    const firstEvent = Array.isArray(first) ? first[0] : (first.events?.[0] ?? first[0])
    expect(bundle.subarray(2, 34).toString('hex')).to.equal(firstEvent.hash)
    for (let i = 0; i < 256; i++) {
      expect(bundle.readUInt16BE(i * 34)).to.equal(32)
      expect(
        Buffer.from(hashLeaf(bundle.subarray(i * 34 + 2, i * 34 + 34))).equals(tile.subarray(i * 32, i * 32 + 32)),
      ).to.equal(true)
    }
    const partial = await fetchTile(`tile/entries/008.p/${SIZE - 2048}`)
    expect(partial.length).to.equal((SIZE - 2048) * 34)
  })

  it('answers 404 for tiles the tree does not have and for malformed paths', async () => {
    for (const path of [
      'tile/0/008',
      `tile/0/008.p/${SIZE - 2048 + 1}`,
      'tile/1/000',
      'tile/2/000.p/1',
      'tile/entries/009.p/1',
      'tile/0/10',
      'tile/0/x000/001',
      'tile/0/000.p/256',
    ]) {
      const response = await fetch(urlOf(api, `/tlog/${path}`))
      expect(response.status, path).to.equal(404)
      expect((await response.json()).error.code).to.equal('not_found')
    }
  })

  it('serves the latest signed checkpoint, verifiable with GET /v1/log/key', async () => {
    const key = (await api.request('GET', '/v1/log/key')).body
    // A trail's default origin is the service's followed by /NAME (docs/trails.md).
    const suffix = trail === undefined ? '' : `/${trail}`
    expect(key.verifier_key).to.match(new RegExp(`^audit-trail\\.invalid/[0-9a-f]{16}${suffix}\\+[0-9a-f]{8}\\+`))
    expect(key.origin).to.equal(key.verifier_key.split('+')[0])
    const response = await fetch(urlOf(api, '/tlog/checkpoint'))
    expect(response.headers.get('content-type')).to.equal('text/plain; charset=utf-8')
    expect(Number(/max-age=(\d+)/.exec(response.headers.get('cache-control') ?? '')?.[1])).to.be.at.most(5)
    const opened = openNote(await response.text(), [ed25519NoteVerifier(key.verifier_key)])
    const checkpoint = parseCheckpoint(opened.text)
    const root = (await api.request('GET', '/v1/merkle/root')).body
    expect(checkpoint).to.deep.include({origin: key.origin, size: root.tree_size})
    expect(Buffer.from(checkpoint.root).toString('hex')).to.equal(root.merkle_root)
  })

  it('signs again only once the tree grew, and keeps every checkpoint', async () => {
    const before = await api.services.store.listCheckpoints()
    expect(await api.services.checkpoints.signIfGrown()).to.equal(undefined)
    await api.request('POST', '/v1/events', {body: makeEvent({action_name: 'one-more'})})
    const signed = await api.services.checkpoints.signIfGrown()
    expect(signed?.tree_size).to.equal(SIZE + 1)
    expect(await api.services.store.listCheckpoints()).to.have.length(before.length + 1)
    const text = await (await fetch(urlOf(api, '/tlog/checkpoint'))).text()
    expect(parseCheckpoint(text.slice(0, text.indexOf('\n\n') + 1)).size).to.equal(SIZE + 1)
    expect(sha256(text)).to.have.length(32)
  })
})

describe('/tlog/ and API keys', () => {
  it('serves /tlog/ without a key while /v1/log/key needs one', async () => {
    const key = 'k'.repeat(32)
    const api = await startTestApi({app: {apiKeys: [{key, scopes: new Set(['read', 'write'])}] as never}})
    try {
      expect((await api.request('GET', '/tlog/checkpoint')).status).to.equal(200)
      expect((await api.request('GET', '/v1/log/key')).status).to.equal(401)
      expect((await api.request('GET', '/v1/log/key', {headers: {authorization: `Bearer ${key}`}})).status).to.equal(
        200,
      )
    } finally {
      await api.close()
    }
  })
})
