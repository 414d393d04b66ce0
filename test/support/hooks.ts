/**
 * Set-up shared by many describes, as mocha hooks: something opened before each test (or once for
 * the describe) and closed after, declared in one line where the describe used to repeat the pair
 * of hooks. See docs/testing.md, "Shared set-up".
 */
import {randomBytes} from 'node:crypto'
import {mkdir, rm} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

/** Before and after each test of the calling describe, or once around all of them. */
export type Per = 'test' | 'suite'

export function hooksFor(per: Per): [typeof beforeEach, typeof afterEach] {
  return per === 'test' ? [beforeEach, afterEach] : [before, after]
}

/**
 * Registers hooks that `open` a value before each test of the calling describe (or once, with `per:
 * 'suite'`) and `close` it after; returns a handle that stands for the value currently open, so a
 * test reads `api.url` as it would of the value itself.
 */
export function opened<T extends object>(
  open: () => Promise<T>,
  close: (value: T) => Promise<unknown>,
  per: Per = 'test',
): T {
  let value: T | undefined
  const [setUp, tearDown] = hooksFor(per)
  setUp(async () => {
    value = await open()
  })
  tearDown(async () => {
    const closing = value
    value = undefined
    if (closing) await close(closing)
  })
  return handle(() => value)
}

/**
 * An object that stands for what `current` gives when it is used. Using it while nothing is current
 * (when the describe is defined, or after the test) throws, naming why.
 */
export function handle<T extends object>(current: () => T | undefined): T {
  const target = (): T => {
    const value = current()
    if (value === undefined) throw new Error('used outside a test: the value is opened by a before hook')
    return value
  }
  return new Proxy({} as T, {
    get: (_, key) => {
      const value: unknown = Reflect.get(target(), key)
      return typeof value === 'function' ? value.bind(target()) : value
    },
    set: (_, key, value) => Reflect.set(target(), key, value),
    has: (_, key) => Reflect.has(target(), key),
    // So that `{...handle}` copies the current value's own members.
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(target(), key)
      return descriptor && {...descriptor, configurable: true}
    },
  })
}

/**
 * A temporary directory for each test of the calling describe (or one for all, with `per: 'suite'`):
 * the path is chosen once, so the describe can hold it in a constant; the directory is made empty
 * before and removed, with all in it, after.
 */
export function useTempDir(per: Per = 'test'): string {
  const dir = path.join(os.tmpdir(), `atrail-test-${randomBytes(6).toString('hex')}`)
  const [setUp, tearDown] = hooksFor(per)
  setUp(() => mkdir(dir).then(() => undefined))
  tearDown(() => rm(dir, {recursive: true, force: true}))
  return dir
}
