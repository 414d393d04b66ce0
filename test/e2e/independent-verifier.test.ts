/**
 * docs/verification.md is enough to write a verifier: `independentVerify` below was written from
 * that page alone (no import from src/, only `canonicalize`, `node:crypto` and the `openssl` CLI),
 * and must agree with `audit-trail verify --package` on real packages produced by the real CLI
 * and on tampered variants of them.
 */
import {spawn, spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync} from 'node:fs'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import canonicalize from 'canonicalize'
import {expect} from 'chai'
import {runCli} from '../support/cli.js'

// ---------------------------------------------------------------- the independent verifier

type Result = {valid: boolean; reason?: string}
const HEX64 = /^[0-9a-f]{64}$/
const ZERO = '0'.repeat(64)
const H = (...parts: Buffer[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest()
const node = (left: Buffer, right: Buffer): Buffer => H(Buffer.from([1]), left, right)
const hex = (s: string): Buffer => {
  if (typeof s !== 'string' || !HEX64.test(s)) throw new Error(`not a 64-hex hash: ${s}`)
  return Buffer.from(s, 'hex')
}
const isIndex = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0

/** RFC 9162 2.1.3.2, as written in the doc: the root an audit path leads to, or null. */
function inclusionRoot(leafIndex: number, treeSize: number, leaf: Buffer, auditPath: string[]): Buffer | null {
  if (!isIndex(leafIndex) || !(leafIndex < treeSize)) return null
  let fn = leafIndex,
    sn = treeSize - 1,
    r = leaf
  for (const p of auditPath) {
    if (sn === 0) return null
    if (fn % 2 === 1 || fn === sn) {
      r = node(hex(p), r)
      if (fn % 2 === 0)
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2)
          sn = Math.floor(sn / 2)
        }
    } else r = node(r, hex(p))
    fn = Math.floor(fn / 2)
    sn = Math.floor(sn / 2)
  }
  return sn === 0 ? r : null
}

/** RFC 9162 2.1.4.2 (consistency proof verification), from the RFC's algorithm. */
function consistent(first: number, second: number, firstHash: Buffer, secondHash: Buffer, proof: string[]): boolean {
  if (!isIndex(first) || !isIndex(second) || first > second || !Array.isArray(proof)) return false
  if (first === second) return proof.length === 0 && firstHash.equals(secondHash)
  if (first === 0) return proof.length === 0 && firstHash.equals(H()) // the empty tree is a prefix of all
  if (proof.length === 0) return false // 1.
  const pathHashes = proof.map(hex)
  if ((first & (first - 1)) === 0) pathHashes.unshift(firstHash) // 2. first is a power of 2
  let fn = first - 1,
    sn = second - 1 // 3.
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2)
    sn = Math.floor(sn / 2)
  } // 4.
  let fr = pathHashes[0],
    sr = pathHashes[0] // 5.
  for (const c of pathHashes.slice(1)) {
    // 6.
    if (sn === 0) return false
    if (fn % 2 === 1 || fn === sn) {
      fr = node(c, fr)
      sr = node(c, sr)
      if (fn % 2 === 0)
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2)
          sn = Math.floor(sn / 2)
        }
    } else sr = node(sr, c)
    fn = Math.floor(fn / 2)
    sn = Math.floor(sn / 2)
  }
  return sn === 0 && fr.equals(firstHash) && sr.equals(secondHash) // 7.
}

/** Runs `openssl ts -verify` on the package's token, exactly as the doc shows. */
async function opensslVerify(digestHex: string, tokenB64: string, caFile: string): Promise<boolean> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-ts-'))
  try {
    await writeFile(path.join(dir, 'token.der'), Buffer.from(tokenB64, 'base64'))
    const r = await run('openssl', [
      'ts',
      '-verify',
      '-digest',
      digestHex,
      '-token_in',
      '-in',
      path.join(dir, 'token.der'),
      '-CAfile',
      caFile,
    ])
    return r.status === 0 && r.stdout.includes('Verification: OK')
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}

/** The signed time and signer CN, read from `openssl ts -reply -token_in -text` as the doc shows. */
async function opensslTokenText(tokenB64: string): Promise<{time: number; tsa: string}> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-ts-'))
  try {
    await writeFile(path.join(dir, 'token.der'), Buffer.from(tokenB64, 'base64'))
    const r = await run('openssl', ['ts', '-reply', '-token_in', '-in', path.join(dir, 'token.der'), '-text'])
    // "Time stamp: Nov 22 01:18:22.456 2026 GMT"; the signer from the certificate in the token: "subject=CN = ..."
    const [, mon, day, clock, year] = /Time stamp: (\w+)\s+(\d+) ([\d:.]+) (\d+) GMT/.exec(r.stdout) ?? []
    const certs = await run('openssl', ['pkcs7', '-inform', 'DER', '-in', path.join(dir, 'token.der'), '-print_certs'])
    const cn = /subject=.*?CN\s*=\s*([^,\n]+)/.exec(certs.stdout)?.[1]?.trim() ?? ''
    return {time: Date.parse(`${mon} ${day} ${year} ${clock} GMT`), tsa: cn}
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}

const PAYLOAD = ['input', 'output', 'metadata', 'error']

/** Section 2, step 1-3: the hashed form, its JCS, its SHA-256. */
function eventHash(e: any): string {
  const {hash, index, salts, erased, redacted, ...form} = e
  if (e.commitments) for (const m of PAYLOAD) delete form[m]
  return createHash('sha256').update(canonicalize(form)!, 'utf8').digest('hex')
}

/** Section 2, step 4: each committed member present with its salt and recomputing, or erased, or redacted. */
function commitmentProblem(e: any): string | undefined {
  if (!e.commitments) return undefined
  for (const m of PAYLOAD) {
    const committed = e.commitments[m]
    if (committed === undefined) {
      if (e[m] !== undefined) return `${m} present but not committed`
      continue
    }
    if (e[m] === undefined) {
      if (e.erased?.[m] === undefined && !(Array.isArray(e.redacted) && e.redacted.includes(m)))
        return `${m} absent but neither erased nor redacted`
      continue
    }
    if (e.erased?.[m] !== undefined) return `${m} present but erased`
    const salt = e.salts?.[m]
    if (typeof salt !== 'string' || !HEX64.test(salt)) return `${m} has no salt`
    const digest = createHash('sha256')
      .update(Buffer.from(salt, 'hex'))
      .update(canonicalize(e[m])!, 'utf8')
      .digest('hex')
    if (digest !== committed) return `${m} does not match its commitment`
  }
  return undefined
}

/** Section 5, erasures: an erased member is covered by an erasure event the package proves. */
function erasureProblem(e: any, erasures: Map<string, any>): string | undefined {
  for (const [m, id] of Object.entries(e.erased ?? {})) {
    const erasure = erasures.get(id as string)
    if (!erasure) return `${m} erased by ${id}, which is not in erasures`
    const meta = erasure.metadata ?? {}
    const inSelection = (f: any) => {
      const t = Date.parse(e.timestamp)
      return (
        (f.agent_id === undefined || e.agent_id === f.agent_id) &&
        (f.action_type === undefined || e.action_type === f.action_type) &&
        (f.trace_id === undefined || e.trace_id === f.trace_id) &&
        (f.session_id === undefined || e.session_id === f.session_id) &&
        (f.since === undefined || t >= Date.parse(f.since)) &&
        (f.until === undefined || t < Date.parse(f.until)) &&
        Object.entries(f.labels ?? {}).every(([k, v]) => e.labels?.[k] === v)
      )
    }
    const covered = meta.ids
      ? (meta.ids[e.id] ?? []).includes(m)
      : meta.members?.includes(m) &&
        e.index < meta.before_index &&
        (meta.recorded_before === undefined || Date.parse(e.recorded_at) < Date.parse(meta.recorded_before)) &&
        inSelection(meta.filter ?? {})
    if (!covered || !(erasure.index > e.index)) return `${m} erased by ${id}, which does not cover it`
  }
  return undefined
}

export async function independentVerify(pkg: any, caFile: string): Promise<Result> {
  const fail = (reason: string): Result => ({valid: false, reason})
  try {
    const version = pkg?.version === 1 || pkg?.version === 2
    if (pkg?.format !== 'atrail-evidence' || !version || pkg.merkle?.algorithm !== 'rfc9162-sha256')
      return fail('not an atrail-evidence v1 or v2 package')
    const {tree_size: size, root} = pkg.merkle
    if (!isIndex(size) || !HEX64.test(root)) return fail('bad merkle summary')
    // 5 (erasures): each erasure event's hash and its inclusion proof, before the events that name it
    const erasures = new Map<string, any>()
    for (const {event, proof} of pkg.erasures ?? []) {
      const isErasure = event.agent_id === 'audit-trail:erasures' && event.action_type === 'ERASURE'
      if (!isErasure || eventHash(event) !== event.hash || commitmentProblem(event))
        return fail(`erasure ${event.id}: not an erasure event that matches its hash`)
      const r = inclusionRoot(proof.leaf_index, size, H(Buffer.from([0]), hex(event.hash)), proof.audit_path)
      if (proof.leaf_index !== event.index || !r || r.toString('hex') !== root)
        return fail(`erasure ${event.id}: inclusion proof does not lead to merkle.root`)
      erasures.set(event.id, event)
    }
    // 2. each event's hash (and the events are in ascending index)
    const byAgent = new Map<string, any[]>()
    let lastIndex = -1
    for (const e of pkg.events) {
      const {hash, index} = e
      if (eventHash(e) !== hash) return fail(`hash mismatch: event ${e.id}`)
      const problem = commitmentProblem(e) ?? erasureProblem(e, erasures)
      if (problem) return fail(`commitment mismatch: event ${e.id}: ${problem}`)
      if (!isIndex(index) || index <= lastIndex) return fail(`events not in ascending index at ${e.id}`)
      lastIndex = index
      byAgent.set(e.agent_id, [...(byAgent.get(e.agent_id) ?? []), e])
    }
    // 3. chain links and the `chains` summary
    const chainAgents = Object.keys(pkg.chains ?? {}).sort()
    if (JSON.stringify(chainAgents) !== JSON.stringify([...byAgent.keys()].sort()))
      return fail('chains: agents differ from the events')
    for (const [agent, events] of byAgent) {
      for (let i = 0; i < events.length; i++) {
        const e = events[i],
          prev = events[i - 1]
        if (!Number.isSafeInteger(e.sequence) || e.sequence < 1) return fail(`chain: bad sequence at ${e.id}`)
        if (e.sequence === 1 && e.prev_hash !== ZERO) return fail(`chain: sequence 1 without zero prev_hash at ${e.id}`)
        if (prev && e.sequence <= prev.sequence) return fail(`chain: sequence not increasing at ${e.id}`)
        if (prev && e.sequence === prev.sequence + 1 && e.prev_hash !== prev.hash)
          return fail(`chain link broken at ${e.id}`)
      }
      const first = events[0],
        last = events[events.length - 1]
      const expected = {
        first_sequence: first.sequence,
        last_sequence: last.sequence,
        anchor_prev_hash: first.prev_hash,
        head_hash: last.hash,
      }
      if (canonicalize(pkg.chains[agent]) !== canonicalize(expected))
        return fail(`chains summary of ${agent} differs from its events`)
    }
    // 4. completeness: one proof per event; no filter = the whole tree; agent only = whole chains
    if (Object.keys(pkg.proofs ?? {}).length !== pkg.events.length)
      return fail('completeness: proofs do not match the events one to one')
    const f = pkg.filters
    const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v)
    const isTime = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v))
    if (
      !isObject(f) ||
      !Object.keys(f).every((k) =>
        ['agent_id', 'action_type', 'trace_id', 'session_id', 'since', 'until', 'labels'].includes(k),
      ) ||
      ![f.agent_id, f.action_type, f.trace_id, f.session_id].every((v) => v === undefined || typeof v === 'string') ||
      ![f.since, f.until].every((v) => v === undefined || isTime(v)) ||
      !(f.labels === undefined || (isObject(f.labels) && Object.values(f.labels).every((v) => typeof v === 'string')))
    )
      return fail('filters: not a selection')
    for (const e of pkg.events) {
      const t = Date.parse(e.timestamp)
      const inside =
        (f.agent_id === undefined || e.agent_id === f.agent_id) &&
        (f.action_type === undefined || e.action_type === f.action_type) &&
        (f.trace_id === undefined || e.trace_id === f.trace_id) &&
        (f.session_id === undefined || e.session_id === f.session_id) &&
        (f.since === undefined || t >= Date.parse(f.since)) &&
        (f.until === undefined || t < Date.parse(f.until)) &&
        Object.entries(f.labels ?? {}).every(([k, v]) => e.labels?.[k] === v)
      if (!inside) return fail(`filters: event ${e.id} is outside the selection`)
    }
    const filterKeys = Object.keys(f)
    if (filterKeys.length === 0 && pkg.events.length !== size)
      return fail('completeness: an unfiltered package misses events')
    if (filterKeys.length === 1 && filterKeys[0] === 'agent_id') {
      for (const [agent, events] of byAgent)
        if (events[0].sequence !== 1 || events.length !== events.at(-1).sequence)
          return fail(`completeness: the chain of ${agent} has gaps`)
    }
    // 5. inclusion proofs, bound to event.index
    for (const e of pkg.events) {
      const p = Object.hasOwn(pkg.proofs ?? {}, e.id) ? pkg.proofs[e.id] : undefined
      if (!p) return fail(`inclusion: no proof for ${e.id}`)
      if (p.leaf_index !== e.index) return fail(`inclusion: leaf_index ${p.leaf_index} != index ${e.index} for ${e.id}`)
      const r = inclusionRoot(p.leaf_index, size, H(Buffer.from([0]), hex(e.hash)), p.audit_path)
      if (!r || r.toString('hex') !== root) return fail(`inclusion proof does not lead to merkle.root for ${e.id}`)
    }
    // 5. the timestamp: consistency with the package tree, then the RFC 3161 token via OpenSSL
    const ts = pkg.timestamp
    if (ts !== null) {
      if (!HEX64.test(ts?.merkle_root) || !isIndex(ts.tree_size)) return fail('timestamp: bad root or tree size')
      if (!consistent(ts.tree_size, size, hex(ts.merkle_root), hex(root), ts.consistency_proof))
        return fail('timestamp: consistency proof fails')
      if (!(await opensslVerify(ts.merkle_root, ts.token, caFile)))
        return fail('timestamp: token does not verify (openssl ts -verify)')
      const signed = await opensslTokenText(ts.token)
      if (signed.time !== Date.parse(ts.timestamp) || signed.tsa !== ts.tsa)
        return fail('timestamp: time or signer differ from the token')
    }
    return {valid: true}
  } catch (error) {
    return fail(`malformed package: ${(error as Error).message}`)
  }
}

// ---------------------------------------------------------------- harness

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
type Run = {status: number | null; stdout: string; stderr: string}

/** Runs `task` on every item, at most `width` at a time. */
async function inTurns<T>(
  items: readonly T[],
  width: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      await task(items[index]!, index)
    }
  }
  await Promise.all(Array.from({length: Math.min(width, items.length)}, lane))
}

function run(command: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = '',
      stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (status) => resolve({status, stdout, stderr}))
  })
}

/** `audit-trail ARGS`, run in this process as bin/run.js runs it (test/support/cli.ts). */
async function audit(args: string[]): Promise<Run> {
  const {code, stdout, stderr} = await runCli(args)
  return {status: code, stdout, stderr}
}

async function cli(...args: string[]): Promise<Run> {
  const r = await audit(args)
  if (r.status !== 0) throw new Error(`audit-trail ${args.join(' ')} exited ${r.status}: ${r.stderr}${r.stdout}`)
  return r
}

const ndjson = (events: object[]): string => events.map((e) => JSON.stringify(e)).join('\n') + '\n'
const moreEvent = (agent: string, i: number): object => ({
  agent_id: agent,
  action_type: 'TOOL_CALL',
  action_name: `step.${i}`,
  action_status: 'success',
  timestamp: `2026-11-21T11:${String(i).padStart(2, '0')}:00Z`,
  labels: {env: 'prod'},
  input: {n: i, note: 'ünïcødé ✓'},
  duration_ms: 10 + i,
  session_id: `run-${i % 2}`,
})
const flipHex = (s: string): string => s.slice(0, -1) + (s.endsWith('0') ? '1' : '0')
const rehash = (e: any): void => {
  e.hash = eventHash(e)
}
const clone = <T>(x: T): T => structuredClone(x)

type Packages = {full: any; filtered: any; session: any; wide: any; erased: any; redacted: any}
type Variant = {name: string; from: keyof Packages; valid: boolean; reason?: RegExp; mutate?: (pkg: any) => void}

const lastOfAgent = (pkg: any, agent: string): any => pkg.events.filter((e: any) => e.agent_id === agent).at(-1)
const ofAgent = (pkg: any, agent: string, sequence: number): any =>
  pkg.events.find((e: any) => e.agent_id === agent && e.sequence === sequence)

const VARIANTS: Variant[] = [
  {name: 'the untouched full package', from: 'full', valid: true},
  {name: 'the package filtered with --agent billing-bot', from: 'filtered', valid: true},
  {name: 'the package filtered with --session-id run-1', from: 'session', valid: true},
  {
    name: 'filters rewritten to another session',
    from: 'session',
    valid: false,
    reason: /outside the selection/,
    mutate: (p) => {
      p.filters = {session_id: 'run-0'}
    },
  },
  {name: 'a package timestamped at a non-power-of-two size, 2-element consistency proof', from: 'wide', valid: true},
  {
    name: 'an event field changed',
    from: 'full',
    valid: false,
    reason: /hash mismatch/,
    mutate: (p) => {
      p.events[1].action_name = 'crm.delete_customer'
    },
  },
  {
    name: 'a payload value changed (the hash covers its commitment)',
    from: 'full',
    valid: false,
    reason: /commitment mismatch/,
    mutate: (p) => {
      p.events[1].input.n = 99
    },
  },
  {
    name: "a payload member's salt changed",
    from: 'full',
    valid: false,
    reason: /commitment mismatch/,
    mutate: (p) => {
      p.events[1].salts.input = flipHex(p.events[1].salts.input)
    },
  },
  {
    name: 'a payload member removed without saying so',
    from: 'full',
    valid: false,
    reason: /commitment mismatch/,
    mutate: (p) => {
      delete p.events[1].input
      delete p.events[1].salts.input
    },
  },
  {
    name: 'a payload member redacted (value and salt left out, listed in redacted): still valid',
    from: 'full',
    valid: true,
    mutate: (p) => {
      delete p.events[1].input
      delete p.events[1].salts
      p.events[1].redacted = ['input']
    },
  },
  {
    name: 'an event changed and its hash recomputed (chains head updated too): the proof fails',
    from: 'full',
    valid: false,
    reason: /inclusion proof/,
    mutate: (p) => {
      const e = lastOfAgent(p, 'support-bot')
      e.action_name = 'crm.delete_customer'
      rehash(e)
      p.chains['support-bot'].head_hash = e.hash
    },
  },
  {
    name: 'a proof element flipped',
    from: 'full',
    valid: false,
    reason: /inclusion proof/,
    mutate: (p) => {
      const pr = p.proofs[p.events[2].id]
      pr.audit_path[1] = flipHex(pr.audit_path[1])
    },
  },
  {
    name: 'merkle.root changed',
    from: 'full',
    valid: false,
    reason: /inclusion proof/,
    mutate: (p) => {
      p.merkle.root = flipHex(p.merkle.root)
    },
  },
  {
    name: 'a prev_hash changed',
    from: 'full',
    valid: false,
    reason: /hash mismatch/,
    mutate: (p) => {
      ofAgent(p, 'billing-bot', 2).prev_hash = flipHex(ofAgent(p, 'billing-bot', 2).prev_hash)
    },
  },
  {
    name: 'a prev_hash changed and the event hash recomputed: the link breaks',
    from: 'full',
    valid: false,
    reason: /chain link broken/,
    mutate: (p) => {
      const e = ofAgent(p, 'billing-bot', 2)
      e.prev_hash = flipHex(e.prev_hash)
      rehash(e)
    },
  },
  {
    name: "two events' proofs swapped",
    from: 'full',
    valid: false,
    reason: /leaf_index/,
    mutate: (p) => {
      const [a, b] = [p.events[0].id, p.events[3].id]
      ;[p.proofs[a], p.proofs[b]] = [p.proofs[b], p.proofs[a]]
    },
  },
  {
    name: "an agent's last event removed",
    from: 'full',
    valid: false,
    reason: /chains summary/,
    mutate: (p) => {
      const e = lastOfAgent(p, 'billing-bot')
      p.events = p.events.filter((x: any) => x.id !== e.id)
    },
  },
  {
    name: "an agent's first event removed (filtered package)",
    from: 'filtered',
    valid: false,
    reason: /chains summary/,
    mutate: (p) => {
      p.events = p.events.slice(1)
    },
  },
  {
    name: 'an event removed from the middle of a chain (unfiltered package: incomplete)',
    from: 'full',
    valid: false,
    reason: /completeness/,
    mutate: (p) => {
      const e = ofAgent(p, 'billing-bot', 2)
      p.events = p.events.filter((x: any) => x.id !== e.id)
      delete p.proofs[e.id]
    },
  },
  {
    name: 'an event removed from the middle of a chain (agent-filtered package: gap)',
    from: 'filtered',
    valid: false,
    reason: /completeness/,
    mutate: (p) => {
      const e = ofAgent(p, 'billing-bot', 2)
      p.events = p.events.filter((x: any) => x.id !== e.id)
      delete p.proofs[e.id]
    },
  },
  {
    name: 'a leftover proof for an event not in the package',
    from: 'filtered',
    valid: false,
    reason: /completeness/,
    mutate: (p) => {
      p.proofs['0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8091'] = p.proofs[p.events[0].id]
    },
  },
  {
    name: 'a member the hash does not cover added to an event',
    from: 'full',
    valid: false,
    reason: /hash mismatch/,
    mutate: (p) => {
      p.events[2].approved_by = 'the CEO'
    },
  },
  {
    name: 'the unsigned timestamp time changed',
    from: 'full',
    valid: false,
    reason: /time or signer/,
    mutate: (p) => {
      p.timestamp.timestamp = '2020-01-01T00:00:00.000Z'
    },
  },
  {
    name: 'the timestamp token bytes altered',
    from: 'full',
    valid: false,
    reason: /token does not verify/,
    mutate: (p) => {
      const der = Buffer.from(p.timestamp.token, 'base64')
      der[der.length - 5] ^= 0x01
      p.timestamp.token = der.toString('base64')
    },
  },
  {
    name: 'the timestamp merkle_root changed',
    from: 'full',
    valid: false,
    reason: /consistency/,
    mutate: (p) => {
      p.timestamp.merkle_root = flipHex(p.timestamp.merkle_root)
    },
  },
  {
    name: 'the consistency proof truncated',
    from: 'full',
    valid: false,
    reason: /consistency/,
    mutate: (p) => {
      p.timestamp.consistency_proof.pop()
    },
  },
  {
    name: 'the consistency proof truncated (non-power-of-two size)',
    from: 'wide',
    valid: false,
    reason: /consistency/,
    mutate: (p) => {
      p.timestamp.consistency_proof.pop()
    },
  },
  {
    name: 'filters rewritten to another agent',
    from: 'filtered',
    valid: false,
    reason: /outside the selection/,
    mutate: (p) => {
      p.filters = {agent_id: 'support-bot'}
    },
  },
  {
    name: 'filters rewritten to an unknown member',
    from: 'filtered',
    valid: false,
    reason: /not a selection/,
    mutate: (p) => {
      p.filters = {foo: 'bar'}
    },
  },
  {
    name: 'filters rewritten to null',
    from: 'filtered',
    valid: false,
    reason: /not a selection/,
    mutate: (p) => {
      p.filters = null
    },
  },
  {
    name: 'filters given a since after some events',
    from: 'full',
    valid: false,
    reason: /outside the selection/,
    mutate: (p) => {
      p.filters = {since: p.events[3].timestamp}
    },
  },
  {
    name: 'an agent-only filter dropped from a filtered package: incomplete',
    from: 'filtered',
    valid: false,
    reason: /completeness/,
    mutate: (p) => {
      p.filters = {}
    },
  },
  {
    name: 'a payload value changed (its commitment no longer matches)',
    from: 'full',
    valid: false,
    reason: /commitment mismatch/,
    mutate: (p) => {
      lastOfAgent(p, 'support-bot').input = {prompt: 'something else'}
    },
  },
  {name: 'a package with an erased member and its erasure', from: 'erased', valid: true},
  {
    name: 'an erased member whose erasure is left out of the package',
    from: 'erased',
    valid: false,
    reason: /not in erasures/,
    mutate: (p) => {
      p.erasures = []
    },
  },
  {
    name: 'a member removed and marked erased by an erasure that does not cover it',
    from: 'erased',
    valid: false,
    reason: /does not cover it/,
    mutate: (p) => {
      const e = ofAgent(p, 'billing-bot', 1)
      const id = p.erasures[0].event.id
      delete e.input
      delete e.salts
      e.erased = {input: id}
    },
  },
  {
    name: 'an erasure event whose coverage was rewritten',
    from: 'erased',
    valid: false,
    reason: /matches its hash/,
    mutate: (p) => {
      p.erasures[0].event.metadata.filter = {}
    },
  },
  {name: 'a package that withholds the inputs (redacted)', from: 'redacted', valid: true},
  {
    name: 'a redacted member taken off the redacted list',
    from: 'redacted',
    valid: false,
    reason: /neither erased nor redacted/,
    mutate: (p) => {
      delete ofAgent(p, 'billing-bot', 1).redacted
    },
  },
  {
    name: 'merkle.algorithm changed',
    from: 'full',
    valid: false,
    reason: /not an atrail-evidence v1 or v2 package/,
    mutate: (p) => {
      p.merkle.algorithm = 'sha1'
    },
  },
]

// ---------------------------------------------------------------- tests

describe('an independent verifier written from docs/verification.md', function () {
  this.timeout(180_000)
  let dir: string
  const packages = {} as Packages
  const results = new Map<string, {independent: Result; cli: Run}>()
  let caFile: string, wideCaFile: string

  before(async function () {
    if (!existsSync(path.join(ROOT, 'dist/commands'))) {
      const build = spawnSync('npm', ['run', 'build'], {cwd: ROOT, encoding: 'utf8'})
      if (build.status !== 0) throw new Error(`npm run build failed: ${build.stderr}`)
    }
    dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-independent-'))
    const data = path.join(dir, 'data'),
      wideData = path.join(dir, 'wide-data')
    caFile = path.join(data, 'tsa/ca.pem')
    wideCaFile = path.join(wideData, 'tsa/ca.pem')
    const examples = await readFile(path.join(ROOT, 'examples/events.ndjson'), 'utf8')
    await writeFile(
      path.join(dir, 'more.ndjson'),
      ndjson([moreEvent('billing-bot', 1), moreEvent('support-bot', 2), moreEvent('ops-bot', 3)]),
    )
    await writeFile(
      path.join(dir, 'wide-start.ndjson'),
      examples.trimEnd() + '\n' + ndjson([1, 2, 3].map((i) => moreEvent('ops-bot', i))),
    )
    await writeFile(
      path.join(dir, 'wide-more.ndjson'),
      ndjson([4, 5, 6, 7, 8, 9, 10, 11, 12, 13].map((i) => moreEvent(i % 2 ? 'ops-bot' : 'billing-bot', i))),
    )

    const main = async (): Promise<void> => {
      // as a user would, in the order of the brief
      await cli('ingest', 'examples/events.ndjson', '--data-dir', data)
      await cli('timestamp', '--data-dir', data)
      await cli('ingest', path.join(dir, 'more.ndjson'), '--data-dir', data)
      await cli('export', '-o', path.join(dir, 'full.atrail.json'), '--data-dir', data)
      await cli('export', '--agent', 'billing-bot', '-o', path.join(dir, 'filtered.atrail.json'), '--data-dir', data)
      await cli('export', '--session-id', 'run-1', '-o', path.join(dir, 'session.atrail.json'), '--data-dir', data)
      // The support bot's inputs erased (docs/erasure.md), then a package with and one without inputs.
      await cli(
        'erase',
        '--agent',
        'support-bot',
        '--members',
        'input',
        '--reason',
        'test',
        '--yes',
        '--data-dir',
        data,
      )
      await cli('export', '-o', path.join(dir, 'erased.atrail.json'), '--data-dir', data)
      await cli('export', '--redact', 'input', '-o', path.join(dir, 'redacted.atrail.json'), '--data-dir', data)
    }
    const wide = async (): Promise<void> => {
      // timestamp at 11 leaves, package at 21
      await cli('ingest', path.join(dir, 'wide-start.ndjson'), '--data-dir', wideData)
      await cli('timestamp', '--data-dir', wideData)
      await cli('ingest', path.join(dir, 'wide-more.ndjson'), '--data-dir', wideData)
      await cli('export', '-o', path.join(dir, 'wide.atrail.json'), '--data-dir', wideData)
    }
    await Promise.all([main(), wide()])
    for (const name of ['full', 'filtered', 'session', 'wide', 'erased', 'redacted'] as const)
      packages[name] = JSON.parse(await readFile(path.join(dir, `${name}.atrail.json`), 'utf8'))

    // Four variants at a time: each runs openssl, and all of them at once on two busy cores took
    // longer than the hook may. The CLI's checks run one at a time in this process (runCli).
    await inTurns(VARIANTS, 4, async (v, i) => {
      const pkg = clone(packages[v.from])
      v.mutate?.(pkg)
      const file = path.join(dir, `variant-${i}.atrail.json`)
      await writeFile(file, JSON.stringify(pkg, null, 2))
      const ca = v.from === 'wide' ? wideCaFile : caFile
      const [independent, cliResult] = await Promise.all([
        independentVerify(JSON.parse(await readFile(file, 'utf8')), ca),
        audit(['verify', '--package', file, '--tsa-ca', ca]),
      ])
      results.set(v.name, {independent, cli: cliResult})
    })
  })

  after(async () => {
    if (dir) await rm(dir, {recursive: true, force: true})
  })

  it('works on real packages: a timestamp, a subset, proofs bound to the whole log', () => {
    const {full, filtered, session, wide} = packages
    expect(session.filters).to.deep.equal({session_id: 'run-1'})
    expect(session.events.map((e: any) => e.session_id)).to.deep.equal(['run-1', 'run-1'])
    expect(full.merkle.tree_size).to.equal(11)
    expect(full.timestamp.tree_size).to.equal(8)
    expect(full.timestamp.consistency_proof).to.have.length(1)
    expect(filtered.events.map((e: any) => e.agent_id)).to.deep.equal([
      'billing-bot',
      'billing-bot',
      'billing-bot',
      'billing-bot',
    ])
    expect(Object.keys(filtered.chains)).to.deep.equal(['billing-bot'])
    expect(filtered.merkle.tree_size).to.equal(11)
    expect(wide.timestamp.tree_size).to.equal(11)
    expect(wide.merkle.tree_size).to.equal(21)
    expect(wide.timestamp.consistency_proof.length).to.be.greaterThan(1)
  })

  for (const v of VARIANTS) {
    it(`${v.valid ? 'both accept' : 'both reject'}: ${v.name}`, () => {
      const r = results.get(v.name)!
      const detail = [
        `independent: ${JSON.stringify(r.independent)}`,
        `CLI (exit ${r.cli.status}): ${r.cli.stdout}${r.cli.stderr}`,
      ].join('\n')
      expect(r.cli.status, detail).to.be.oneOf([0, 1])
      expect(r.independent.valid, detail).to.equal(r.cli.status === 0) // they agree
      expect(r.independent.valid, detail).to.equal(v.valid)
      if (v.reason) expect(r.independent.reason, detail).to.match(v.reason)
    })
  }
})
