/**
 * API keys and scopes (docs/security.md). The key file: one key per line, optionally followed
 * by whitespace and comma-separated scopes (`read`, `write`, `erase`, `admin`, `approve`; default
 * read,write), then optional bindings `NAME=VALUE` separated by whitespace (`name=LABEL`: who
 * the key is, recorded as `decided_by` of approvals and `requested_by` of erasures); blank lines
 * and `#` comments ignored (also at the end of a line); a key is 16..256 characters of
 * [A-Za-z0-9._~+/=-].
 */
import {constantTimeEqual, randomBytes} from '../crypto.js'
import {AGENT_PATTERN, TRAIL_NAME_RULE, isTrailName} from '../trail/name.js'
import {CodedError} from '../coded-error.js'

export type Scope = 'read' | 'write' | 'erase' | 'admin' | 'approve'

export interface ApiKey {
  key: string
  scopes: ReadonlySet<Scope>
  /** The line's `name=` label: never the key, safe to record and to log. */
  name?: string
  /** `trail=`: the only trails the key opens (docs/trails.md); absent: every trail. */
  trails?: readonly string[]
  /** `agent=`: the only agents the key writes and reads, `*` any run of characters; absent: every agent. */
  agents?: readonly string[]
}

const KEY = /^[A-Za-z0-9._~+/=-]{16,256}$/
const SCOPES: ReadonlySet<string> = new Set(['read', 'write', 'erase', 'admin', 'approve'])
/** A label: one word of printable characters, so that it can end a line and still be read back. */
const LABEL = /^[^\s\p{Cc}]{1,128}$/u
/** Where the bindings begin: the first word of the form `word=` after the key (no scope holds `=`). */
const BINDING_START = /(?:^|\s)[A-Za-z_][A-Za-z0-9_-]*=/

/** The API keys file's one error class (docs/security.md, "API keys"); each names the line. */
export type KeyFileErrorCode =
  /** A key that is not 16 to 256 characters of the key alphabet. */
  | 'bad_key'
  /** A scope after the key that is not read, write, erase, admin or approve. */
  | 'unknown_scope'
  /** A binding after the scopes that is unknown, given twice or whose value cannot be used. */
  | 'bad_binding'
  /** A key given on two lines. */
  | 'duplicate_key'
  /** A file without a single key. */
  | 'no_key'

export class KeyFileError extends CodedError<KeyFileErrorCode> {
  override name = 'KeyFileError'
}

/** The bindings of a line, by their name; each known binding reads its value into the key. */
const BINDINGS: Record<string, (value: string, key: ApiKey) => string | undefined> = {
  name(value, key) {
    if (!LABEL.test(value)) return 'name= takes a label of 1 to 128 characters without spaces'
    key.name = value
    return undefined
  },
  trail(value, key) {
    const names = value.split(',')
    const bad = names.find((name) => !isTrailName(name))
    if (bad !== undefined) return `trail= takes trail names separated by commas (${TRAIL_NAME_RULE}): '${bad}'`
    key.trails = [...new Set(names)]
    return undefined
  },
  agent(value, key) {
    const patterns = value.split(',')
    const bad = patterns.find((pattern) => !AGENT_PATTERN.test(pattern))
    if (bad !== undefined)
      return `agent= takes agent ids or patterns (* for any characters) separated by commas, no spaces: '${bad}'`
    key.agents = [...new Set(patterns)]
    return undefined
  },
}

function parseBindings(text: string, key: ApiKey, where: string): void {
  const seen = new Set<string>()
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    const equals = word.indexOf('=')
    const name = equals > 0 ? word.slice(0, equals) : word
    const bind = Object.hasOwn(BINDINGS, name) ? BINDINGS[name] : undefined
    if (equals <= 0 || bind === undefined)
      throw new KeyFileError(
        'bad_binding',
        `${where}: unknown binding '${word}' (after the scopes: trail=NAMES, agent=PATTERNS, name=LABEL)`,
      )
    if (seen.has(name)) throw new KeyFileError('bad_binding', `${where}: ${name}= is given twice`)
    seen.add(name)
    const problem = bind(word.slice(equals + 1), key)
    if (problem !== undefined) throw new KeyFileError('bad_binding', `${where}: ${problem}`)
  }
}

function parseScopes(text: string, where: string): Scope[] {
  // Spaces around the commas are allowed (`read, write`).
  const scopes = text === '' ? ['read', 'write'] : text.split(',').map((scope) => scope.trim())
  for (const scope of scopes) {
    if (!SCOPES.has(scope))
      throw new KeyFileError(
        'unknown_scope',
        `${where}: unknown scope '${scope}' (after the key: read, write, erase, admin, approve, comma-separated)`,
      )
  }
  return scopes as Scope[]
}

export function parseKeyFile(text: string, source = 'the key file'): ApiKey[] {
  const keys: ApiKey[] = []
  /** The line of each key: a key given twice (perhaps with other scopes) is ambiguous, and refused. */
  const lineOf = new Map<string, number>()
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    // `#` is in no key, no scope and no label, so a comment may also end a line (`KEY read  # CI job`).
    const line = raw.replace(/#.*$/, '').trim()
    if (line === '') continue
    const [key] = line.split(/\s/, 1)
    const rest = line.slice(key!.length)
    const where = `${source}, line ${i + 1}`
    if (!KEY.test(key!))
      throw new KeyFileError('bad_key', `${where}: a key must be 16 to 256 characters of A-Z a-z 0-9 . _ ~ + / = -`)
    const binding = BINDING_START.exec(rest)
    const scopeText = (binding ? rest.slice(0, binding.index) : rest).trim()
    const apiKey: ApiKey = {key: key!, scopes: new Set(parseScopes(scopeText, where))}
    if (binding) parseBindings(rest.slice(binding.index), apiKey, where)
    const earlier = lineOf.get(key!)
    if (earlier !== undefined)
      throw new KeyFileError(
        'duplicate_key',
        `${where}: the same key as line ${earlier}; give each key once, with all its scopes`,
      )
    lineOf.set(key!, i + 1)
    keys.push(apiKey)
  }
  if (keys.length === 0) throw new KeyFileError('no_key', `${source} holds no key`)
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
