import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {cosignatureVerifier, formatCheckpoint, parseCheckpoint} from '../../src/core/checkpoint/index.js'
import {ed25519Generate} from '../../src/core/crypto.js'
import {ed25519NoteSigner, openNote, signNote} from '../../src/core/note/index.js'
import {formatAddCheckpoint, SIZE_MEDIA_TYPE} from '../../src/core/witness/add-checkpoint-body.js'
import {createWitnessApp} from '../../src/server/witness-app.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {noteWithCosignatures} from '../../src/services/checkpoints.js'
import {Witness, WITNESS_STATE_FILE} from '../../src/services/witness.js'
import {WitnessClient} from '../../src/services/witness-client.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'

interface RunningWitness {
  witness: Witness
  url: string
  logged: string[]
  close(): Promise<void>
}

async function startWitness(dir: string, logs: Map<string, string[]>): Promise<RunningWitness> {
  // Every cosignature at a time of its own, so that two of the same checkpoint differ.
  let clock = 1_800_000_000
  const witness = await Witness.open({dir, name: 'witness.test/w1', logs, now: () => clock++})
  const logged: string[] = []
  const server = http.createServer(createWitnessApp(witness, (line) => logged.push(line)).callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    witness,
    logged,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

async function post(url: string, body: string): Promise<{status: number; type: string; text: string}> {
  const response = await fetch(`${url}/add-checkpoint`, {method: 'POST', body})
  return {status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text()}
}

async function ingest(services: AuditServices, count: number): Promise<void> {
  await services.ingest.recordBatch(Array.from({length: count}, (_, i) => makeEvent({action_name: `step-${i}`})))
}

describe('the log and a C2SP tlog-witness over HTTP', function () {
  this.timeout(60_000)
  let logDir: string
  let witnessDir: string
  let services: AuditServices
  let running: RunningWitness
  let logKey: string
  let witnessKey: string
  const origin = 'log.test/audit'
  const logLines: string[] = []

  const openLog = async () =>
    openAudit({
      dataDir: logDir,
      origin,
      witnesses: [{url: running.url, verifierKey: witnessKey}],
      logLine: (line) => logLines.push(line),
    })
  const signAndWait = async () => {
    const record = await services.checkpoints.signIfGrown()
    await Promise.all(services.witnesses.map((w) => w.idle()))
    return record
  }
  const cosignaturesOfLatest = async () => (await services.store.latestCheckpoint())!.cosignatures

  beforeEach(async () => {
    logDir = await tempDir()
    witnessDir = await tempDir()
    logLines.length = 0
    // The log key first, so the witness can be configured with it.
    const bootstrap = await openAudit({dataDir: logDir, origin})
    logKey = await bootstrap.checkpoints.verifierKey()
    await bootstrap.close()
    running = await startWitness(witnessDir, new Map([[origin, [logKey]]]))
    witnessKey = running.witness.verifierKey
    services = await openLog()
  })
  afterEach(async () => {
    await services.close()
    await running.close()
    await removeDir(logDir)
    await removeDir(witnessDir)
  })

  it('cosigns a normal sequence, and the served checkpoint carries the cosignatures', async () => {
    await ingest(services, 5)
    await signAndWait()
    expect(await cosignaturesOfLatest()).to.have.length(1)
    await ingest(services, 3)
    const record = await signAndWait()
    expect(record!.tree_size).to.equal(8)
    expect(await cosignaturesOfLatest()).to.have.length(1)
    expect(running.witness.stateOf(origin)).to.deep.equal({
      size: 8,
      root: Buffer.from(record!.root, 'hex').toString('base64'),
    })
    const served = await services.checkpoints.servedNote()
    const opened = openNote(served, [cosignatureVerifier(witnessKey)])
    expect(opened.verified.map((s) => s.name)).to.deep.equal(['witness.test/w1'])
    expect(parseCheckpoint(opened.text).size).to.equal(8)
    expect(logLines).to.deep.equal([])
  })

  it('goes on after the witness restarts, and after the log restarts (409 with the size, then resent)', async () => {
    await ingest(services, 4)
    await signAndWait()
    await running.close()
    running = await startWitness(witnessDir, new Map([[origin, [logKey]]]))
    // The restarted witness remembers size 4 (its state file), on another port: the log restarts too.
    expect(running.witness.stateOf(origin)?.size).to.equal(4)
    await services.close()
    services = await openLog()
    await ingest(services, 2)
    await signAndWait()
    expect((await services.store.latestCheckpoint())!.tree_size).to.equal(6)
    expect(await cosignaturesOfLatest()).to.have.length(1)
    expect(running.witness.stateOf(origin)?.size).to.equal(6)
    // Submitted again (as on every start): the witness cosigns again, the log keeps one line.
    services.witnesses[0]!.submit((await services.store.latestCheckpoint())!)
    await services.witnesses[0]!.idle()
    // Checkpoints and cosignatures survive the restart (journal and snapshot).
    expect((await services.store.listCheckpoints()).map((c) => [c.tree_size, c.cosignatures.length])).to.deep.equal([
      [4, 1],
      [6, 1],
    ])
  })

  describe('refusals: each with the tlog-witness status, and nothing cosigned', () => {
    let state: string
    let note8: string
    beforeEach(async () => {
      await ingest(services, 8)
      note8 = (await signAndWait())!.note
      state = await readFile(path.join(witnessDir, WITNESS_STATE_FILE), 'utf8')
    })
    afterEach(async () => {
      expect(await readFile(path.join(witnessDir, WITNESS_STATE_FILE), 'utf8')).to.equal(state)
      expect(running.witness.stateOf(origin)?.size).to.equal(8)
    })
    const signer = async () => (await services.checkpoints.identity()).signer
    const checkpointNote = async (size: number, root: Uint8Array, by?: ReturnType<typeof ed25519NoteSigner>) =>
      signNote(formatCheckpoint({origin, size, root, extensions: []}), [by ?? (await signer())])

    it('a forged checkpoint (another key): 403', async () => {
      await ingest(services, 2)
      const forger = ed25519NoteSigner(origin, ed25519Generate().key)
      const note = await checkpointNote(10, await services.tree.read((t) => t.rootAt(10)), forger)
      const answer = await post(
        running.url,
        formatAddCheckpoint({oldSize: 8, proof: await services.tree.read((t) => t.consistencyProof(8, 10)), note}),
      )
      expect(answer.status).to.equal(403)
    })

    it('an unknown origin: 404', async () => {
      const other = signNote(
        formatCheckpoint({
          origin: 'other.test/log',
          size: 8,
          root: await services.tree.read((t) => t.rootAt(8)),
          extensions: [],
        }),
        [ed25519NoteSigner('other.test/log', ed25519Generate().key)],
      )
      expect((await post(running.url, formatAddCheckpoint({oldSize: 8, proof: [], note: other}))).status).to.equal(404)
    })

    it('a rollback: 400 from the size held, 409 naming the size otherwise', async () => {
      const note = await checkpointNote(5, await services.tree.read((t) => t.rootAt(5)))
      expect((await post(running.url, formatAddCheckpoint({oldSize: 8, proof: [], note}))).status).to.equal(400)
      const answer = await post(
        running.url,
        formatAddCheckpoint({oldSize: 3, proof: await services.tree.read((t) => t.consistencyProof(3, 5)), note}),
      )
      expect(answer).to.deep.equal({status: 409, type: SIZE_MEDIA_TYPE, text: '8\n'})
    })

    it('a fork (same size, another root): 409', async () => {
      const note = await checkpointNote(8, Buffer.alloc(32, 1))
      const answer = await post(running.url, formatAddCheckpoint({oldSize: 8, proof: [], note}))
      expect(answer.status).to.equal(409)
      expect(answer.type).to.not.equal(SIZE_MEDIA_TYPE)
      // The genuine checkpoint of that size is still cosigned (the same statement again).
      expect((await post(running.url, formatAddCheckpoint({oldSize: 8, proof: [], note: note8}))).status).to.equal(200)
    })

    it('a consistency proof with a flipped byte: 422', async () => {
      await ingest(services, 5)
      const note = await checkpointNote(13, await services.tree.read((t) => t.rootAt(13)))
      const proof = await services.tree.read((t) => t.consistencyProof(8, 13))
      const last = proof.length - 1
      proof[last] = Buffer.from(proof[last]!)
      proof[last][7]! ^= 0x01
      expect((await post(running.url, formatAddCheckpoint({oldSize: 8, proof, note}))).status).to.equal(422)
    })

    it('a malformed request: 400', async () => {
      expect((await post(running.url, 'old 08\n\n' + note8)).status).to.equal(400)
      expect((await post(running.url, 'old 8\n' + note8)).status).to.equal(400)
    })
  })

  it('on the log side, a refusal is one logged line and no cosignature, and is not signed around', async () => {
    await ingest(services, 8)
    await signAndWait()
    // The witness now holds a different view of size 8 (a split view, as another log instance would show it).
    const file = path.join(witnessDir, WITNESS_STATE_FILE)
    const forked = JSON.parse(await readFile(file, 'utf8'))
    forked[origin].root = Buffer.alloc(32, 9).toString('base64')
    await writeFile(file, JSON.stringify(forked))
    await running.close()
    running = await startWitness(witnessDir, new Map([[origin, [logKey]]]))
    await services.close()
    services = await openLog()
    await ingest(services, 3)
    const signed = await signAndWait()
    expect(signed!.tree_size).to.equal(11)
    expect(await cosignaturesOfLatest()).to.deep.equal([])
    expect(logLines).to.have.length(1)
    expect(logLines[0]).to.match(/witness witness\.test\/w1: refused the checkpoint of size 11 \(422\)/)
    expect(await services.checkpoints.signIfGrown()).to.equal(undefined)
    expect((await services.store.listCheckpoints()).map((c) => c.tree_size)).to.deep.equal([8, 11])
    expect(noteWithCosignatures((await services.store.latestCheckpoint())!)).to.equal(signed!.note)
  })

  it('retries a failing witness (503) with growing delays until it answers, then keeps its cosignature', async () => {
    await ingest(services, 3)
    const record = (await services.checkpoints.signIfGrown())!
    await Promise.all(services.witnesses.map((w) => w.idle()))
    await services.close()
    services = await openAudit({dataDir: logDir, origin})
    await ingest(services, 2)
    const next = (await services.checkpoints.signIfGrown())!
    // A witness that is down for its first three requests.
    let failures = 3
    const flaky = http.createServer(async (request, response) => {
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      if (failures-- > 0) return void response.writeHead(503).end('busy\n')
      const answer = await running.witness.addCheckpoint(Buffer.concat(chunks).toString('utf8'))
      response.writeHead(answer.status, {'content-type': answer.contentType}).end(answer.body)
    })
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`
    const client = new WitnessClient({
      store: services.store,
      tree: services.tree,
      witness: {url, verifierKey: witnessKey},
      minDelayMs: 5,
      log: (line) => logLines.push(line),
    })
    try {
      client.submit(next)
      await client.idle()
    } finally {
      client.close()
      flaky.close()
    }
    // Three 503s, then a 409 naming size 3 (this client starts from 0), then the 200.
    expect(failures).to.equal(-2)
    expect(logLines.filter((line) => / answered 503 /.test(line))).to.have.length(3)
    expect(record.tree_size).to.equal(3)
    expect(await cosignaturesOfLatest()).to.have.length(1)
    expect(running.witness.stateOf(origin)?.size).to.equal(5)
  })

  it('never blocks: an unreachable witness is retried in the background', async () => {
    await running.close()
    await services.close()
    services = await openAudit({
      dataDir: logDir,
      origin,
      witnesses: [{url: 'http://127.0.0.1:9', verifierKey: witnessKey}],
      logLine: (line) => logLines.push(line),
    })
    await ingest(services, 2)
    const record = await services.checkpoints.signIfGrown()
    expect(record!.tree_size).to.equal(2)
    await ingest(services, 1)
    expect(await services.tree.size()).to.equal(3)
    running = await startWitness(witnessDir, new Map([[origin, [logKey]]]))
  })
})
