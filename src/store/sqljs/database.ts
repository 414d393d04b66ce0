/**
 * The one door to sql.js (docs/design.md, Layout): SQLite compiled to WebAssembly, the database held in memory.
 *
 * Bulk writes and reads go straight to the SQLite C API that sql.js exports, because its generic
 * `Statement.bind` encodes every string with a JavaScript loop and allocates it separately, which
 * made binding cost more than SQLite's own insert work. Here one batch of strings is encoded with
 * Buffer.write into one block of WebAssembly memory and bound by pointer (SQLITE_STATIC). Should a
 * later sql.js hide the statement pointer, the slow public API is used instead (same results).
 */
import initSqlJs from 'sql.js'
import type {Database, SqlJsStatic, SqlValue, Statement} from 'sql.js'

/** The C functions sql.js exports on its module object (sqlite.org/c3ref names). */
interface SqliteC {
  _malloc(size: number): number
  _free(pointer: number): void
  writeArrayToMemory(bytes: Uint8Array, pointer: number): void
  UTF8ToString(pointer: number, maxBytes?: number): string
  _sqlite3_bind_text(stmt: number, index: number, text: number, bytes: number, destructor: number): number
  _sqlite3_bind_int(stmt: number, index: number, value: number): number
  _sqlite3_bind_double(stmt: number, index: number, value: number): number
  _sqlite3_bind_blob(stmt: number, index: number, blob: number, bytes: number, destructor: number): number
  _sqlite3_step(stmt: number): number
  _sqlite3_reset(stmt: number): number
  _sqlite3_clear_bindings(stmt: number): number
  _sqlite3_column_text(stmt: number, column: number): number
  _sqlite3_column_bytes(stmt: number, column: number): number
  _sqlite3_sql(stmt: number): number
}

const SQLITE_ROW = 100
const SQLITE_DONE = 101
/** Strings bound per chunk before the block is handed back (bounds the scratch memory). */
const CHUNK_BYTES = 8 * 1024 * 1024

let module: Promise<SqlJsStatic> | undefined

function loadSqlJs(): Promise<SqlJsStatic> {
  return (module ??= initSqlJs())
}

/**
 * Every database here is an image in this thread's memory that no other connection opens, and
 * the caller's own journal (or the events, for the search index) gives durability. So: SQLite's
 * rollback journal only in RAM, no syncs, and the lock held for good (locking_mode EXCLUSIVE):
 * otherwise each statement outside a transaction takes and drops a lock and looks for a hot
 * journal file through Emscripten's file system, which costs a one-row read more than the read
 * itself (docs/benchmarks.md, "Figures behind choices in the code").
 */
export const IN_MEMORY_PRAGMAS =
  'PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY;'

/** One bound parameter: text, a number, or NULL. */
export type Param = string | number | null

/** A prepared statement with the fast paths of this module. */
export class Prepared {
  readonly #pointer: number | undefined

  constructor(
    readonly statement: Statement,
    private readonly c: SqliteC,
    private readonly scratch: {buffer: Buffer},
    private readonly fail: () => never,
  ) {
    this.#pointer = findStatementPointer(statement, c)
  }

  /** Runs the statement once per row (an INSERT), inside the caller's transaction. */
  runRows(rows: readonly Param[][]): void {
    if (this.#pointer === undefined) {
      for (const row of rows) this.statement.run(row as SqlValue[])
      return
    }
    let start = 0
    while (start < rows.length) start = this.#runChunk(this.#pointer, rows, start)
  }

  /** Encodes the strings of rows[start..] until CHUNK_BYTES, binds them by pointer and steps. */
  #runChunk(stmt: number, rows: readonly Param[][], start: number): number {
    const offsets: number[] = []
    let used = 0
    let end = start
    for (; end < rows.length; end++) {
      const need = rowCapacity(rows[end]!)
      if (end > start && used + need > CHUNK_BYTES) break
      if (this.scratch.buffer.length < used + need) this.#grow(used + need, used)
      for (const value of rows[end]!) {
        if (typeof value !== 'string') continue
        const written = this.scratch.buffer.write(value, used, 'utf8')
        offsets.push(used, written)
        used += written
      }
    }
    const block = this.c._malloc(Math.max(used, 1))
    if (block === 0) throw new Error('sqlite: out of memory')
    try {
      this.c.writeArrayToMemory(this.scratch.buffer.subarray(0, used), block)
      let k = 0
      for (let r = start; r < end; r++) {
        const row = rows[r]!
        for (let i = 0; i < row.length; i++) {
          const value = row[i]
          if (typeof value === 'string') {
            this.c._sqlite3_bind_text(stmt, i + 1, block + offsets[k]!, offsets[k + 1]!, 0)
            k += 2
          } else if (typeof value === 'number') {
            if (Number.isInteger(value) && value >= -0x80000000 && value <= 0x7fffffff)
              this.c._sqlite3_bind_int(stmt, i + 1, value)
            else this.c._sqlite3_bind_double(stmt, i + 1, value)
          } else {
            this.c._sqlite3_bind_blob(stmt, i + 1, 0, 0, 0) // a NULL blob pointer binds SQL NULL
          }
        }
        const code = this.c._sqlite3_step(stmt)
        this.c._sqlite3_reset(stmt)
        if (code !== SQLITE_DONE) this.fail()
      }
    } finally {
      this.c._sqlite3_clear_bindings(stmt)
      this.c._free(block)
    }
    return end
  }

  #grow(size: number, keep: number): void {
    const bigger = Buffer.allocUnsafe(Math.max(size, this.scratch.buffer.length * 2))
    this.scratch.buffer.copy(bigger, 0, 0, keep)
    this.scratch.buffer = bigger
  }

  /** The first column (text) of every result row; the statement must select one text column. */
  texts(params: Param[] = []): string[] {
    const out: string[] = []
    this.statement.bind(params as SqlValue[])
    try {
      if (this.#pointer === undefined) {
        while (this.statement.step()) {
          const value = this.statement.get()[0]
          out.push(value === null || value === undefined ? '' : String(value))
        }
        return out
      }
      for (;;) {
        const code = this.c._sqlite3_step(this.#pointer)
        if (code === SQLITE_DONE) return out
        if (code !== SQLITE_ROW) this.fail()
        // sqlite.org/c3ref/column_blob.html: call column_text first, then column_bytes.
        const text = this.c._sqlite3_column_text(this.#pointer, 0)
        const bytes = this.c._sqlite3_column_bytes(this.#pointer, 0)
        out.push(bytes === 0 ? '' : this.c.UTF8ToString(text, bytes))
      }
    } finally {
      this.statement.reset()
    }
  }
}

/** Worst case UTF-8 size of a row's strings: three bytes per UTF-16 code unit. */
function rowCapacity(row: readonly Param[]): number {
  let size = 0
  for (const value of row) if (typeof value === 'string') size += value.length * 3
  return size
}

/**
 * sql.js keeps the sqlite3_stmt pointer in a minified property. Find it by asking SQLite for the
 * statement's SQL text through each numeric candidate; undefined when none answers.
 */
function findStatementPointer(statement: Statement, c: SqliteC): number | undefined {
  const sql = statement.getSQL()
  for (const value of Object.values(statement as unknown as Record<string, unknown>)) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 4096) continue
    const text = c._sqlite3_sql(value)
    if (text !== 0 && c.UTF8ToString(text) === sql) return value
  }
  return undefined
}

/** An in-memory SQLite database. */
export class SqliteDatabase {
  readonly #scratch = {buffer: Buffer.allocUnsafe(1024 * 1024)}
  readonly #statements = new Map<string, Prepared>()

  private constructor(
    private readonly db: Database,
    private readonly c: SqliteC,
    readonly fastPath: boolean,
  ) {}

  /** Opens `bytes` (an SQLite file image) or an empty database, with IN_MEMORY_PRAGMAS. */
  static async open(bytes?: Uint8Array, options: {fastPath?: boolean} = {}): Promise<SqliteDatabase> {
    const SQL = await loadSqlJs()
    const db = new SQL.Database(bytes ?? null)
    try {
      db.exec(IN_MEMORY_PRAGMAS)
    } catch (error) {
      db.close()
      throw error
    }
    return new SqliteDatabase(db, SQL as unknown as SqliteC, options.fastPath ?? true)
  }

  /** Runs one or more statements without parameters. */
  exec(sql: string): void {
    this.db.exec(sql)
  }

  /** A cached prepared statement for `sql`. */
  prepare(sql: string): Prepared {
    let prepared = this.#statements.get(sql)
    if (!prepared) {
      const statement = this.db.prepare(sql)
      const fail = (): never => this.#fail()
      prepared = new Prepared(statement, this.fastPath ? this.c : withoutFastPath(this.c), this.#scratch, fail)
      this.#statements.set(sql, prepared)
    }
    return prepared
  }

  /** Runs `work` in one transaction: all of it or, when it throws, none of it. */
  transaction(work: () => void): void {
    this.db.exec('BEGIN')
    try {
      work()
      this.db.exec('COMMIT')
    } catch (error) {
      this.db.exec('ROLLBACK')
      throw error
    }
  }

  /** The whole database as a standard SQLite file image (must not be inside a transaction). */
  export(): Uint8Array {
    return this.db.export()
  }

  close(): void {
    for (const prepared of this.#statements.values()) prepared.statement.free()
    this.#statements.clear()
    this.db.close()
  }

  /** Throws SQLite's message for the last failed call on this connection. */
  #fail(): never {
    // sql.js throws sqlite3_errmsg() for any non-zero result code (its typings omit the argument).
    ;(this.db.handleError as unknown as (code: number) => null)(1)
    throw new Error('sqlite: unknown error')
  }
}

/** The same C functions but with no usable statement pointer, forcing the public API. */
function withoutFastPath(c: SqliteC): SqliteC {
  return {...c, _sqlite3_sql: () => 0} as SqliteC
}
