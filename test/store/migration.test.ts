/**
 * A data directory written by the version 1 layout (hashes as text, labels as (key, value, index)
 * rows; fixtures/schema-1 was made by the service before the change) is migrated on open, once,
 * with its Merkle root unchanged.
 */
import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import {openAudit} from '../../src/services/audit.js'
import {removeDir, tempDir} from './support.js'

const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'schema-1', 'events.sqlite')
/** What the service reported for the fixture when it wrote it. */
const ROOT = 'd63df385a002efde795b42b1be9e3f8b870d13fc5c5f8a42af8f7cb3f313d1cd'
const SIZE = 39

const sqlite = (file: string, sql: string) => execFileSync('sqlite3', [file, sql]).toString().trim()

describe('sql.js store: migration of version 1 data directories', () => {
  let dir: string
  beforeEach(() => {
    dir = tempDir()
    fs.copyFileSync(FIXTURE, path.join(dir, 'events.sqlite'))
  })
  afterEach(() => removeDir(dir))

  it(
    'stores hashes as BLOBs and times as integers, keeps the root, the events and the timestamp, and migrates only ' +
      'once',
    async () => {
      const file = path.join(dir, 'events.sqlite')
      expect(sqlite(file, "select value from store_meta where key = 'schema_version'")).to.equal('1')
      const before = sqlite(
        file,
        `select json_group_array(json_array("index", id, prev_hash, hash, input, timestamp, recorded_at))
      from (select * from events order by "index")`,
      )
      const audit = await openAudit({dataDir: dir})
      try {
        expect(await audit.integrity.merkleRoot()).to.include({merkle_root: ROOT, tree_size: SIZE})
        expect(await audit.integrity.verifyAll()).to.include({valid: true, events_checked: SIZE})
        const [timestamp] = await audit.store.listTimestamps()
        expect(timestamp?.tree_size).to.equal(29)
        const first = await audit.store.getEvent(
          (await audit.store.queryEvents({}, {limit: 1, offset: 0})).items[0]!.id,
        )
        expect(first?.prev_hash).to.equal('0'.repeat(64))
        expect(first?.hash).to.match(/^[0-9a-f]{64}$/)
      } finally {
        await audit.close()
      }
      expect(sqlite(file, "select value from store_meta where key = 'schema_version'")).to.equal('5')
      expect(
        sqlite(
          file,
          "select count(*) from events where typeof(hash) = 'blob' and length(hash) = 32 and typeof(prev_hash) = " +
            "'blob'",
        ),
      ).to.equal(String(SIZE))
      expect(
        sqlite(
          file,
          "select count(*) from events where typeof(timestamp) = 'integer' and typeof(recorded_at) = 'integer'",
        ),
      ).to.equal(String(SIZE))
      expect(sqlite(file, "select sql from sqlite_master where name = 'events'")).to.include(
        'timestamp INTEGER NOT NULL',
      )
      expect(sqlite(file, 'pragma integrity_check')).to.equal('ok')
      const after = sqlite(
        file,
        `select json_group_array(json_array("index", id, lower(hex(prev_hash)), lower(hex(hash)), input,
      strftime('%Y-%m-%dT%H:%M:%fZ', timestamp / 1000.0, 'unixepoch'),
      strftime('%Y-%m-%dT%H:%M:%fZ', recorded_at / 1000.0, 'unixepoch')))
      from (select * from events order by "index")`,
      )
      expect(after).to.equal(before)
      const again = await openAudit({dataDir: dir})
      try {
        expect(await again.integrity.merkleRoot()).to.include({merkle_root: ROOT, tree_size: SIZE})
      } finally {
        await again.close()
      }
    },
  )

  it('migrates a version 2 file (hashes already BLOBs) to integer times with the root unchanged', async () => {
    const file = path.join(dir, 'events.sqlite')
    // The layout of version 2: hashes as 32-byte BLOBs (this sqlite3 may predate unhex()).
    const hashes = JSON.parse(
      sqlite(file, 'select json_group_array(json_array("index", prev_hash, hash)) from events'),
    ) as [number, string, string][]
    sqlite(
      file,
      hashes
        .map(
          ([index, prev, hash]) =>
            `update events set prev_hash = x'${prev}', hash = x'${hash}' where "index" = ${index};`,
        )
        .join('') + "update store_meta set value = '2' where key = 'schema_version'",
    )
    expect(sqlite(file, "select count(*) from events where typeof(hash) = 'blob'")).to.equal(String(SIZE))
    const times =
      'select json_group_array(json_array(timestamp, recorded_at)) from (select * from events order by "index")'
    const before = sqlite(file, times)
    const audit = await openAudit({dataDir: dir})
    try {
      expect(await audit.integrity.merkleRoot()).to.include({merkle_root: ROOT, tree_size: SIZE})
      expect(await audit.integrity.verifyAll()).to.include({valid: true, events_checked: SIZE})
    } finally {
      await audit.close()
    }
    expect(sqlite(file, "select value from store_meta where key = 'schema_version'")).to.equal('5')
    expect(
      sqlite(
        file,
        "select count(*) from events where typeof(timestamp) = 'integer' and typeof(recorded_at) = 'integer'",
      ),
    ).to.equal(String(SIZE))
    const iso = (column: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ${column} / 1000.0, 'unixepoch')`
    expect(
      sqlite(file, times.replace('timestamp, recorded_at', `${iso('timestamp')}, ${iso('recorded_at')}`)),
    ).to.equal(before)
  })

  it('moves every label row into the dictionary form, across batches; label filters find the same events', async () => {
    const file = path.join(dir, 'events.sqlite')
    const labelled = (labels: Record<string, string>) =>
      sqlite(
        file,
        `select json_group_array("index") from
      (select "index" from events where ${Object.entries(labels)
        .map(([k, v]) => `json_extract(labels, '$.${k}') = '${v}'`)
        .join(' and ')}
      order by "index")`,
      )
    const filters: Record<string, string>[] = [{env: 'prod'}, {team: 't3'}, {env: 'prod', team: 't1'}]
    const expected = filters.map(labelled)
    // Rows beyond the events (an index only) make the table span three batches of the migration.
    sqlite(
      file,
      `with recursive n(i) as (select 1000 union all select i + 1 from n where i < 121000)
      insert into event_labels (event_index, key, value) select i, 'bulk', 'v' || (i % 3) from n`,
    )
    const rows = sqlite(file, 'select count(*) from event_labels')
    const audit = await openAudit({dataDir: dir})
    try {
      const found = await Promise.all(
        filters.map(async (labels) =>
          JSON.stringify((await audit.store.queryEvents({labels}, {limit: 1000, offset: 0})).items.map((e) => e.index)),
        ),
      )
      expect(found).to.deep.equal(expected)
      expect(JSON.parse(expected[0]!)).to.have.length(19)
    } finally {
      await audit.close()
    }
    expect(sqlite(file, "select count(*) from sqlite_master where name = 'event_labels'")).to.equal('0')
    expect(sqlite(file, 'select count(*) from label_index')).to.equal(rows)
    expect(sqlite(file, 'select count(*) from label_pairs')).to.equal('6')
    expect(
      sqlite(
        file,
        "select count(*) from label_index join label_pairs p on p.id = pair where key = 'bulk' and value = 'v1'",
      ),
    ).to.equal('40001')
  })
})
