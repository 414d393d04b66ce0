/**
 * Rows of issue 31: ingest of events signed by their agent against unsigned ones in the same run
 * (single events and batches; target at most 15 % slower), the ceiling of Ed25519 verification on
 * one core, and `verify` of the signed log against the unsigned one. Signing is the client's work
 * and happens outside the timed parts.
 */
import path from 'node:path'
import {generateSigningJwk, jwkVerifier, publicJwkOf, type PrivateSigningJwk} from '../src/core/crypto.js'
import {jwkThumbprint} from '../src/core/jws/jwk.js'
import {signEvent} from '../src/core/signature/index.js'
import {openAudit, type AuditServices} from '../src/services/audit.js'
import {AGENTS, syntheticEvent} from './events.js'
import {fmt} from './rows.js'

export interface SignatureRow {
  what: string
  value: string
  target: string
  ceiling?: string
}

const BATCH = 1000
const CONCURRENT = 64
const perSecond = (count: number, ms: number) => `${fmt(count / (ms / 1000))} /s`
const slower = (signedMs: number, unsignedMs: number) => `${fmt((signedMs / unsignedMs - 1) * 100, 1)} % slower`

/** The i-th synthetic event, signed by its agent's key when `keys` are given. */
function body(i: number, keys?: PrivateSigningJwk[]): Record<string, unknown> {
  const event = syntheticEvent(i)
  return keys ? signEvent(event, keys[i % AGENTS]!) : event
}

/** `count` events from `from` as batches of BATCH, timing only the recording. */
async function batchIngest(services: AuditServices, from: number, count: number, keys?: PrivateSigningJwk[]) {
  let ms = 0
  for (let i = from; i < from + count; i += BATCH) {
    const bodies = Array.from({length: Math.min(BATCH, from + count - i)}, (_, k) => body(i + k, keys))
    const t0 = performance.now()
    const {status} = await services.ingest.recordBatch(bodies)
    ms += performance.now() - t0
    if (status !== 201) throw new Error('a benchmark batch was refused')
  }
  return ms
}

/** `count` single events, CONCURRENT requests in flight (group commit shares their writes). */
async function singleIngest(services: AuditServices, from: number, count: number, keys?: PrivateSigningJwk[]) {
  const bodies = Array.from({length: count}, (_, k) => body(from + k, keys))
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({length: CONCURRENT}, async () => {
      while (next < bodies.length) await services.ingest.recordOne(bodies[next++])
    }),
  )
  return performance.now() - t0
}

/** Verifications of one Ed25519 signature a second, on this thread: the ceiling of signed ingest per core. */
function ed25519Ceiling(): number {
  const key = generateSigningJwk('Ed25519')
  const event = signEvent(syntheticEvent(0), key)
  const [header, signature] = (event.signature as string).split('..') as [string, string]
  const verify = jwkVerifier(publicJwkOf(key))
  const data = Buffer.from(`${header}.${'x'.repeat(400)}`)
  const bytes = Buffer.from(signature, 'base64url')
  const rounds = 5000
  const t0 = performance.now()
  for (let i = 0; i < rounds; i++) verify(data, bytes)
  return rounds / ((performance.now() - t0) / 1000)
}

export async function signaturesPhase(dir: string, events: number, record: (row: SignatureRow) => void) {
  const keys = Array.from({length: AGENTS}, () => generateSigningJwk('Ed25519'))
  const unsigned = await openAudit({dataDir: path.join(dir, 'unsigned')})
  const signed = await openAudit({dataDir: path.join(dir, 'signed')})
  try {
    for (const [i, key] of keys.entries()) {
      const jwk = publicJwkOf(key)
      await signed.keys.register(`agent-${i}`, jwkThumbprint(jwk), jwk)
    }
    const single = Math.min(events, 20_000)
    // Unsigned first, then signed, then each again: the better of two runs of each.
    const singleMs = {unsigned: Infinity, signed: Infinity}
    for (let round = 0; round < 2; round++) {
      singleMs.unsigned = Math.min(singleMs.unsigned, await singleIngest(unsigned, round * single, single))
      singleMs.signed = Math.min(singleMs.signed, await singleIngest(signed, round * single, single, keys))
    }
    const ceiling = ed25519Ceiling()
    record({
      what: `signed ingest, single events (${CONCURRENT} in flight, in process)`,
      value: perSecond(single, singleMs.signed),
      target: '<= 15 % slower than unsigned',
      ceiling:
        `unsigned ${perSecond(single, singleMs.unsigned)} (${slower(singleMs.signed, singleMs.unsigned)}); ` +
        `Ed25519 verification alone: ${fmt(ceiling)} /s on one core`,
    })
    const bulk = Math.max(events - 2 * single, BATCH)
    const bulkMs = {
      unsigned: await batchIngest(unsigned, 2 * single, bulk),
      signed: await batchIngest(signed, 2 * single, bulk, keys),
    }
    record({
      what: `signed ingest, batches of ${fmt(BATCH)} (${fmt(bulk)} events)`,
      value: perSecond(bulk, bulkMs.signed),
      target: '<= 15 % slower than unsigned',
      ceiling: `unsigned ${perSecond(bulk, bulkMs.unsigned)} (${slower(bulkMs.signed, bulkMs.unsigned)})`,
    })
    const total = await signed.store.count()
    const t0 = performance.now()
    const unsignedVerdict = await unsigned.integrity.verifyAll()
    const t1 = performance.now()
    const signedVerdict = await signed.integrity.verifyAll()
    const t2 = performance.now()
    if (!unsignedVerdict.valid || !signedVerdict.valid) throw new Error('a benchmark log does not verify')
    record({
      what: `verify (GET /v1/verify) of ${fmt(total)} signed events`,
      value: `${fmt((t2 - t1) / 1000, 2)} s`,
      target: '-',
      ceiling: `${fmt(await unsigned.store.count())} unsigned: ${fmt((t1 - t0) / 1000, 2)} s`,
    })
  } finally {
    await unsigned.close()
    await signed.close()
  }
}
