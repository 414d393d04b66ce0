import {execFile} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'
import {expect} from 'chai'
import {MerkleTree, computeRoot} from '../../src/core/merkle/index.js'
import {createBlockJob, hashClaimedBlocks, isFinished, stitchBlocks} from '../../src/core/merkle/levels.js'
import {buildTree, computeRootParallel, hashBlocksOnThreads} from '../../src/threads/merkle-build.js'
import {hex, leafDataList, treeOf} from '../core/merkle/fixtures.js'
import {concatLeaves, expectSameTree} from '../core/merkle/tree-compare.js'

// Above merkle-build.ts's 2^16-leaf threshold, so that buildTree really starts workers.
const LARGE = 70_001

describe('threads/merkle-build (worker threads)', function () {
  // Each worker under tsx takes about 400 ms to start.
  this.timeout(30_000)
  let leaves: Uint8Array[]
  let data: Buffer
  let appended: MerkleTree
  let expectedRoot: string
  before(() => {
    leaves = leafDataList(LARGE)
    data = concatLeaves(leaves)
    appended = treeOf(leaves)
    expectedRoot = hex(computeRoot(leaves))
  })

  it('a worker alone hashes every block of a shared job (the calling thread does none)', async () => {
    const job = createBlockJob(data, 2 ** 12, true)
    await hashBlocksOnThreads(job, 1, false)
    expect(isFinished(job)).to.equal(true)
    expect(hashClaimedBlocks(job), 'blocks left for this thread').to.equal(0)
    stitchBlocks(job)
    expectSameTree(MerkleTree.fromLevels(LARGE, job.levels), appended, [65_536, 69_999])
  })

  it('two workers and the calling thread share the blocks and give the same tree', async () => {
    const job = createBlockJob(data, 2 ** 10, true)
    await hashBlocksOnThreads(job, 2)
    stitchBlocks(job)
    expect(hex(MerkleTree.fromLevels(LARGE, job.levels).root())).to.equal(expectedRoot)
  })

  it('buildTree and computeRootParallel above the threshold equal append and computeRoot', async () => {
    const bulk = await buildTree(data, {threads: 2})
    expectSameTree(bulk, appended, [16_384, 32_768, 49_152])
    expect(hex(await computeRootParallel(data, {threads: 3}))).to.equal(expectedRoot)
    expect(hex(await computeRootParallel(data, {threads: 1}))).to.equal(expectedRoot)
    bulk.append(leaves[0]!)
    appended.append(leaves[0]!)
    expect(hex(bulk.root())).to.equal(hex(appended.root()))
  })

  it('rejects, instead of hanging, when a worker throws', async () => {
    // No level buffers: the worker's first write throws a TypeError.
    const job = {...createBlockJob(data, 2 ** 12, true), levels: []}
    const error = await hashBlocksOnThreads(job, 1, false).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).to.be.instanceOf(Error)
    expect(isFinished(job)).to.equal(false)
  })

  it('leaves nothing running: a fresh tsx process exits by itself after a threaded build', async () => {
    const bulkModule = new URL('../../src/threads/merkle-build.ts', import.meta.url).href
    const script = `
      const {buildTree} = await import(${JSON.stringify(bulkModule)})
      const tree = await buildTree(Buffer.alloc(32 * 70000, 1), {threads: 2})
      console.log(Buffer.from(tree.root()).toString('hex'))`
    const {stdout} = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        timeout: 20_000, // a process kept alive by a worker fails here instead of hanging
      },
    )
    const expected = computeRoot(Array.from({length: 70000}, () => Buffer.alloc(32, 1)))
    expect(stdout.trim()).to.equal(hex(expected))
  })
})
