import {createHash, generateKeyPairSync} from 'node:crypto'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {ed25519NoteVerifier, ed25519VerifierKey, openNote} from '../../src/core/note/index.js'
import {referenceLeafHash} from '../core/merkle/reference.js'
import {runCli, startServe} from '../support/cli.js'
import {postgresPerTest} from '../support/stores.js'

type Server = Awaited<ReturnType<typeof startServe>>

const ORIGIN = 'log.test/postgres'

async function fetchOk(url: string): Promise<Response> {
  const response = await fetch(url)
  expect(response.status, url).to.equal(200)
  return response
}

/** RFC 9162 2.1.1 over leaf hashes (not leaf data): the root a tile client recomputes. */
function rootOfLeafHashes(hashes: Buffer[]): Buffer {
  if (hashes.length === 1) return hashes[0]!
  let k = 1
  while (k * 2 < hashes.length) k *= 2
  const node = Buffer.concat([
    Buffer.from([1]),
    rootOfLeafHashes(hashes.slice(0, k)),
    rootOfLeafHashes(hashes.slice(k)),
  ])
  return createHash('sha256').update(node).digest()
}

describe('checkpoints, tiles and the log key with several serve processes on one PostgreSQL database', function () {
  this.timeout(180_000)
  let servers: Server[] = []
  const fresh = postgresPerTest(async () => {
    await Promise.all(servers.map((server) => server.stop().catch(() => undefined)))
    servers = []
  })

  it('every process signs with one log key, serves checkpoints of the one tree and the same tiles', async () => {
    for (let i = 0; i < 2; i++) {
      servers.push(await startServe(['--data-dir', fresh.dir, '--database-url', fresh.url, '--origin', ORIGIN]))
    }
    const [first, second] = servers as [Server, Server]
    const keys = await Promise.all(servers.map(async (server) => (await fetchOk(`${server.url}/v1/log/key`)).json()))
    expect(keys[0]).to.deep.equal(keys[1])
    expect(keys[0].origin).to.equal(ORIGIN)
    const offline = await runCli(['keys', 'log', '--database-url', fresh.url, '--origin', ORIGIN])
    expect(offline.code, offline.stderr).to.equal(0)
    expect(offline.stdout.trim()).to.equal(keys[0].verifier_key)

    // 300 events through the first process: one full level-0 tile and a partial one of 44.
    const total = 300
    const events = Array.from({length: total}, (_, n) => ({
      agent_id: `agent-${n % 3}`,
      action_type: 'TOOL_CALL',
      action_name: `step_${n}`,
    }))
    const posted = await fetch(`${first.url}/v1/batch`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify(events),
    })
    expect(posted.status).to.equal(201)

    // The second process signs (or serves) a checkpoint of the whole tree within a few seconds.
    const verifier = ed25519NoteVerifier(keys[0].verifier_key)
    let body = ''
    for (let tries = 0; tries < 100; tries++) {
      body = await (await fetchOk(`${second.url}/tlog/checkpoint`)).text()
      if (body.split('\n')[1] === String(total)) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const note = openNote(body, [verifier])
    const [origin, size, root] = note.text.split('\n')
    expect([origin, size]).to.deep.equal([ORIGIN, String(total)])
    const served = await (await fetchOk(`${second.url}/v1/merkle/root`)).json()
    expect(Buffer.from(root!, 'base64').toString('hex')).to.equal(served.merkle_root)

    // A client with only the checkpoint and the tiles recomputes the root, from either process.
    for (const server of servers) {
      const full = Buffer.from(await (await fetchOk(`${server.url}/tlog/tile/0/000`)).arrayBuffer())
      const partial = Buffer.from(await (await fetchOk(`${server.url}/tlog/tile/0/001.p/44`)).arrayBuffer())
      expect([full.length, partial.length]).to.deep.equal([256 * 32, 44 * 32])
      const leafHashes = [
        ...Array.from({length: 256}, (_, i) => full.subarray(i * 32, i * 32 + 32)),
        ...Array.from({length: 44}, (_, i) => partial.subarray(i * 32, i * 32 + 32)),
      ]
      expect(rootOfLeafHashes(leafHashes).toString('base64')).to.equal(root)
      // Entry bundles: uint16 length 32, then the event hash; each leaf hash is SHA-256(0x00 || entry).
      const entries = Buffer.from(await (await fetchOk(`${server.url}/tlog/tile/entries/001.p/44`)).arrayBuffer())
      expect(entries.length).to.equal(44 * 34)
      const data = Array.from({length: 44}, (_, i) => {
        expect(entries.readUInt16BE(i * 34)).to.equal(32)
        return entries.subarray(i * 34 + 2, i * 34 + 34)
      })
      expect(data.map((d) => referenceLeafHash(d).toString('hex'))).to.deep.equal(
        leafHashes.slice(256).map((h) => h.toString('hex')),
      )
      expect((await fetch(`${server.url}/tlog/tile/0/001`)).status).to.equal(404)
    }

    // An evidence package from the second process carries a checkpoint that verifies with the key.
    const packageFile = path.join(fresh.dir, 'run.atrail.json')
    const exported = await fetch(`${second.url}/v1/export`)
    expect(exported.status).to.equal(200)
    await writeFile(packageFile, Buffer.from(await exported.arrayBuffer()))
    const verified = await runCli(['verify', '--package', packageFile, '--log-key', keys[0].verifier_key])
    expect(verified.code, verified.stdout + verified.stderr).to.equal(0)
    // Another key of the same name: the package names no signature by it, which fails (signed-note).
    const other = generateKeyPairSync('ed25519').publicKey.export({format: 'der', type: 'spki'}).subarray(-32)
    const rejected = await runCli(['verify', '--package', packageFile, '--log-key', ed25519VerifierKey(ORIGIN, other)])
    expect(rejected.code, rejected.stdout + rejected.stderr).to.equal(1)
  })
})
