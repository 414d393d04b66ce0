import {expect} from 'chai'
import {ed25519Generate, ed25519SeedToPem} from '../../src/core/crypto.js'
import {proveCheckpoints} from '../../src/services/migrate-proof.js'
import {readLogKey} from '../../src/store/sqljs/log-key.js'
import {makeEvent, servicesPerTest} from '../support/harness.js'

/**
 * What migrate proves of a copied log's checkpoints (services/migrate-proof.ts), on the services of
 * the copy: here a data directory stands for it, as the proof reads any store alike.
 */
describe("migrate's proof of the log's checkpoints", function () {
  this.timeout(30_000)
  const ctx = servicesPerTest()

  async function signedThenGrown() {
    await ctx.services.ingest.recordBatch([makeEvent(), makeEvent(), makeEvent()])
    const before = (await ctx.services.checkpoints.signIfGrown())!
    await ctx.services.ingest.recordBatch([makeEvent(), makeEvent()])
    return {before, pem: (await readLogKey(ctx.dir))!}
  }

  it('signs the grown tree and has a witness holding the last checkpoint accept it', async () => {
    const {before, pem} = await signedThenGrown()
    const proof = await proveCheckpoints(ctx.services, before, pem)
    expect(proof).to.deep.equal({
      latest_checkpoint: {tree_size: 3, origin: before.note.split('\n')[0], valid: true},
      checkpoint_after_move: {tree_size: 5, witness_accepts: true},
      problems: [],
    })
    expect((await ctx.services.store.latestCheckpoint())!.tree_size).to.equal(5)
  })

  it('finds a checkpoint that does not name the copied tree, and one the copied key did not sign', async () => {
    const {before, pem} = await signedThenGrown()
    const forged = {...before, root: 'ab'.repeat(32)}
    const wrongRoot = await proveCheckpoints(ctx.services, forged, pem)
    expect(wrongRoot.latest_checkpoint!.valid).to.equal(false)
    expect(wrongRoot.problems.join('; ')).to.contain("the latest checkpoint's root is not the copied tree's at size 3")
    expect(wrongRoot.checkpoint_after_move!.witness_accepts).to.equal(false)

    const otherKey = ed25519SeedToPem(ed25519Generate().seed)
    const unsigned = await proveCheckpoints(ctx.services, before, otherKey)
    expect(unsigned.problems[0]).to.match(/^the database signs as .* where the data directory signed as /)
    expect(unsigned.checkpoint_after_move!.witness_accepts).to.equal(false)
    expect(unsigned.problems.at(-1)).to.match(
      /a witness holding tree size 3 refuses the first checkpoint: .*trusted key/,
    )
  })

  it('proves nothing of a log that never signed a checkpoint', async () => {
    await ctx.services.ingest.recordBatch([makeEvent()])
    expect(await proveCheckpoints(ctx.services, undefined, undefined)).to.deep.equal({
      latest_checkpoint: null,
      checkpoint_after_move: null,
      problems: [],
    })
  })
})
