import {expect} from 'chai'
import fc from 'fast-check'
import {SqliteDatabase, type Param} from '../../src/store/sqljs/database.js'

/** Writes rows through a database and reads them back as JSON, so types and bytes are compared. */
async function roundTrip(rows: Param[][], fastPath: boolean): Promise<unknown[]> {
  const db = await SqliteDatabase.open(undefined, {fastPath})
  try {
    db.exec('CREATE TABLE t (a, b, c)')
    db.transaction(() => db.prepare('INSERT INTO t VALUES (?, ?, ?)').runRows(rows))
    return db
      .prepare('SELECT json_array(a, typeof(a), b, typeof(b), c, typeof(c)) FROM t ORDER BY rowid')
      .texts()
      .map((t) => JSON.parse(t))
  } finally {
    db.close()
  }
}

describe('store sqlite door', () => {
  it('binds by pointer exactly as sql.js binds (text with NUL and emoji, integers, doubles, NULL)', async () => {
    const rows: Param[][] = [
      ['plain', 0, null],
      ['nul\u0000inside', -1, 2 ** 31],
      ['emoji 😀 ünï', 2 ** 53 - 1, 0.1 + 0.2],
      ['', -(2 ** 31), 1e300],
      [null, 5e-324, 'x'.repeat(1000)],
    ]
    const fast = await roundTrip(rows, true)
    expect(fast).to.deep.equal(await roundTrip(rows, false))
    // Like sql.js, numbers outside int32 are bound as doubles (INTEGER columns convert them back).
    expect(fast[1]).to.deep.equal(['nul\u0000inside', 'text', -1, 'integer', 2 ** 31, 'real'])
    expect(fast[2]).to.deep.equal(['emoji 😀 ünï', 'text', 2 ** 53 - 1, 'real', 0.1 + 0.2, 'real'])
    expect(fast[4]).to.deep.equal([null, 'null', 5e-324, 'real', 'x'.repeat(1000), 'text'])
  })

  it('agrees with the sql.js binding on random rows (property)', async () => {
    const value = fc.oneof(
      fc.string({unit: 'grapheme'}),
      fc.integer(),
      fc.double({noNaN: true, noDefaultInfinity: true}).filter((d) => !Object.is(d, -0)),
      fc.constant(null),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(value, value, value), {maxLength: 20}), async (rows) => {
        expect(await roundTrip(rows, true)).to.deep.equal(await roundTrip(rows, false))
      }),
      {numRuns: 60},
    )
  })

  it('splits big batches into chunks of at most a few MiB of strings', async () => {
    const rows: Param[][] = Array.from({length: 5}, (_, i) => [String(i).repeat(3 * 1024 * 1024), i, null])
    const back = await roundTrip(rows, true)
    expect(back.map((r) => (r as [string])[0].length)).to.deep.equal([3, 3, 3, 3, 3].map((m) => m * 1024 * 1024))
    expect(back.map((r) => (r as unknown[])[2])).to.deep.equal([0, 1, 2, 3, 4])
  })

  it("throws SQLite's message for a failed row and rolls the transaction back", async () => {
    const db = await SqliteDatabase.open()
    try {
      db.exec('CREATE TABLE u (k TEXT UNIQUE)')
      expect(() =>
        db.transaction(() => db.prepare('INSERT INTO u VALUES (?)').runRows([['a'], ['b'], ['a']])),
      ).to.throw(/UNIQUE constraint failed: u\.k/)
      expect(db.prepare('SELECT count(*) FROM u').texts()).to.deep.equal(['0'])
      db.transaction(() => db.prepare('INSERT INTO u VALUES (?)').runRows([['a']]))
      expect(db.prepare('SELECT k FROM u').texts()).to.deep.equal(['a'])
    } finally {
      db.close()
    }
  })

  it('exports a standard SQLite image that opens again', async () => {
    const db = await SqliteDatabase.open()
    db.exec("CREATE TABLE t (x); INSERT INTO t VALUES ('kept')")
    const image = db.export()
    db.close()
    // "SQLite format 3\0" is the header string of every database file (sqlite.org/fileformat.html 1.3.1).
    expect(Buffer.from(image.subarray(0, 16)).toString('latin1')).to.equal('SQLite format 3\u0000')
    const again = await SqliteDatabase.open(image)
    expect(again.prepare('SELECT x FROM t').texts()).to.deep.equal(['kept'])
    again.close()
  })

  it('opens every database with the in-memory settings, and keeps them across an export', async () => {
    const settings = (db: SqliteDatabase) =>
      ['locking_mode', 'journal_mode', 'synchronous', 'temp_store'].map(
        (name) => db.prepare(`PRAGMA ${name}`).texts()[0],
      )
    // synchronous 0 = OFF, temp_store 2 = MEMORY (sqlite.org/pragma.html).
    const expected = ['exclusive', 'memory', '0', '2']
    const db = await SqliteDatabase.open()
    db.exec("CREATE TABLE t (x); INSERT INTO t VALUES ('kept')")
    expect(settings(db)).to.deep.equal(expected)
    const image = db.export()
    expect(settings(db)).to.deep.equal(expected)
    // The lock held for good does not stop the same connection writing after the export.
    db.exec("INSERT INTO t VALUES ('after')")
    expect(db.prepare('SELECT count(*) FROM t').texts()).to.deep.equal(['2'])
    db.close()
    const again = await SqliteDatabase.open(image)
    expect(settings(again)).to.deep.equal(expected)
    again.close()
  })
})
