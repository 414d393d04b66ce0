/**
 * API keys and scopes (docs/security.md). The key file: one key per line, optionally followed
 * by whitespace and comma-separated scopes (`read`, `write`, `erase`, `admin`; default read,write); blank lines and `#`
 * comments ignored (also at the end of a line); a key is 16..256 characters of [A-Za-z0-9._~+/=-].
 */
import {constantTimeEqual, randomBytes} from '../crypto.js'

export type Scope = 'read' | 'write' | 'erase' | 'admin'

export interface ApiKey {
  key: string
  scopes: ReadonlySet<Scope>
}

const KEY = /^[A-Za-z0-9._~+/=-]{16,256}$/
const SCOPES: ReadonlySet<string> = new Set(['read', 'write', 'erase', 'admin'])

export class KeyFileError extends Error {}

export function parseKeyFile(text: string, source = 'the key file'): ApiKey[] {
  const keys: ApiKey[] = []
  /** The line of each key: a key given twice (perhaps with other scopes) is ambiguous, and refused. */
  const lineOf = new Map<string, number>()
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    // `#` is in no key and no scope, so a comment may also end a line (`KEY read  # CI job`).
    const line = raw.replace(/#.*$/, '').trim()
    if (line === '') continue
    const [key] = line.split(/\s/, 1)
    const scopeText = line.slice(key!.length).trim()
    const where = `${source}, line ${i + 1}`
    if (!KEY.test(key!))
      throw new KeyFileError(`${where}: a key must be 16 to 256 characters of A-Z a-z 0-9 . _ ~ + / = -`)
    // Spaces around the commas are allowed (`read, write`).
    const scopes = scopeText === '' ? ['read', 'write'] : scopeText.split(',').map((scope) => scope.trim())
    for (const scope of scopes) {
      if (!SCOPES.has(scope))
        throw new KeyFileError(
          `${where}: unknown scope '${scope}' (after the key: read, write, erase, admin, comma-separated)`,
        )
    }
    const earlier = lineOf.get(key!)
    if (earlier !== undefined)
      throw new KeyFileError(`${where}: the same key as line ${earlier}; give each key once, with all its scopes`)
    lineOf.set(key!, i + 1)
    keys.push({key: key!, scopes: new Set(scopes as Scope[])})
  }
  if (keys.length === 0) throw new KeyFileError(`${source} holds no key`)
  return keys
}

/** Finds the key in constant time with respect to its contents: every stored key is compared. */
export function findKey(keys: readonly ApiKey[], presented: string): ApiKey | undefined {
  let found: ApiKey | undefined
  for (const candidate of keys) {
    if (constantTimeEqual(candidate.key, presented)) found = candidate
  }
  return found
}

/** A new key: 32 random bytes, base64url (43 characters). */
export function generateKey(): string {
  return randomBytes(32).toString('base64url')
}
