import {expect} from 'chai'
import path from 'node:path'
import {ROOT, runCli} from '../support/cli.js'
import {postgresPerTest} from '../support/stores.js'

describe('the CLI: migrate a data directory into PostgreSQL', function () {
  const fresh = postgresPerTest()

  it('copies events and timestamps, proves the copy, and refuses a database that is not empty', async () => {
    const ingested = await runCli(['ingest', path.join(ROOT, 'examples', 'events.ndjson'), '--data-dir', fresh.dir])
    expect(ingested.code, ingested.stderr).to.equal(0)
    expect((await runCli(['timestamp', '--data-dir', fresh.dir])).code).to.equal(0)
    const before = JSON.parse((await runCli(['merkle', 'root', '--json', '--data-dir', fresh.dir])).stdout)

    const migrated = await runCli(['migrate', '--json', '--data-dir', fresh.dir, '--database-url', fresh.url])
    expect(migrated.code, migrated.stderr).to.equal(0)
    const proof = JSON.parse(migrated.stdout)
    expect(proof).to.deep.include({
      events: before.tree_size,
      merkle_root: before.merkle_root,
      chains_valid: true,
      timestamps: 1,
    })
    expect(proof.latest_timestamp).to.deep.equal({tree_size: before.tree_size, valid: true, consistent: true})

    // The database now answers as the data directory did.
    const after = JSON.parse(
      (await runCli(['merkle', 'root', '--json', '--data-dir', fresh.dir, '--database-url', fresh.url])).stdout,
    )
    expect(after).to.include({tree_size: before.tree_size, merkle_root: before.merkle_root})
    const verified = await runCli([
      'timestamps',
      'verify',
      '--json',
      '--data-dir',
      fresh.dir,
      '--database-url',
      fresh.url,
    ])
    expect(verified.code, verified.stderr).to.equal(0)

    const again = await runCli(['migrate', '--data-dir', fresh.dir, '--database-url', fresh.url])
    expect(again.code).to.equal(2)
    expect(again.stderr).to.match(
      new RegExp(
        '^Error: the database already holds \\d+ events and 1 timestamp: migrate copies into an empty database ' +
          'only; create a new one \\(createdb\\) and give its URL with --database-url\n$',
      ),
    )
  })
})
