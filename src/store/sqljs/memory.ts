/**
 * A full garbage collection on demand, to keep the peak memory of a large store down.
 *
 * sql.js holds the whole database in one ArrayBuffer, which it reallocates (12.5 % larger, copied)
 * as the database grows, and `export()` copies it whole once more. V8 frees a dropped ArrayBuffer
 * only at its next major collection, which may come late: with a 650 MB database an old buffer,
 * the live one and an export were seen alive together (about 2 GB). Collecting right before an
 * export and right after its bytes are written keeps it to the live database plus one copy.
 *
 * `--expose-gc` set at run time and `gc` taken from a fresh context is the documented way to reach
 * V8's collector without a command-line flag; where that is refused, this does nothing.
 */
import v8 from 'node:v8'
import vm from 'node:vm'

let collect: (() => void) | null | undefined

export function collectGarbage(): void {
  if (collect === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc')
      collect = vm.runInNewContext('gc') as () => void
    } catch {
      collect = null
    }
  }
  collect?.()
}
