/**
 * The property of docs/verification.md: for random logs with keys, signed events, a signed
 * statement and erasures, every export (any selection, any redaction) verifies, and any single
 * change to one member of one event the package carries (in `events`, `keys` or `erasures`) is
 * refused.
 */
import {expect} from 'chai'
import fc from 'fast-check'
import {verifyPackage} from '../../../src/core/evidence/verify.js'
import {startTestApi} from '../../support/harness.js'
import {exportPackage, recordCorpusLog} from './corpus-log.js'

const MEMBERS = ['input', 'output', 'metadata', 'error'] as const

const payload = fc.record(
  {
    input: fc.jsonValue({maxDepth: 2}),
    output: fc.string({maxLength: 20}),
    metadata: fc.dictionary(fc.string({minLength: 1, maxLength: 5}), fc.integer()),
    error: fc.string({minLength: 1, maxLength: 20}),
  },
  {requiredKeys: []},
)
const extraEvent = fc.record({
  action_name: fc.constantFrom('a', 'b.c', 'step'),
  session_id: fc.constantFrom('s-x', 's-y'),
})

const selections = fc.constantFrom(
  '',
  'agent_id=bot',
  'agent_id=signer',
  'session_id=s-x',
  'label.env=prod',
  'trace_id=t-0',
)
const redactions = fc.subarray([...MEMBERS])

/** A different value of the same member: a string grows, a number moves, an object or array gains an element. */
function changed(value: unknown): unknown {
  if (typeof value === 'string') return `${value}0`
  if (typeof value === 'number') return value + 1
  if (typeof value === 'boolean') return !value
  if (Array.isArray(value)) return [...value, 'tampered']
  if (value !== null && typeof value === 'object') return {...value, tampered: '0'.repeat(64)}
  return 'tampered'
}

describe('evidence packages: every export verifies, every single-member change is refused', function () {
  this.timeout(600_000)

  it('holds for random logs, selections and redactions', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(extraEvent, payload), {maxLength: 4}),
        selections,
        redactions,
        fc.nat(),
        fc.nat(),
        fc.boolean(),
        async (extra, selection, redact, pick, memberPick, remove) => {
          const api = await startTestApi()
          try {
            await recordCorpusLog(
              api,
              extra.map(([event, members]) => ({...event, ...members})),
            )
            const query = [selection, redact.length > 0 ? `redact=${redact.join(',')}` : ''].filter(Boolean).join('&')
            const pkg = await exportPackage(api, query)
            const verdict = await verifyPackage(pkg)
            expect(verdict.failure, query).to.equal(undefined)
            // One member of one carried event, changed or removed.
            const carried = [
              ...pkg.events,
              ...pkg.keys.map((k: any) => k.event),
              ...pkg.erasures.map((e: any) => e.event),
            ]
            const target = structuredClone(pkg)
            const all = [
              ...target.events,
              ...target.keys.map((k: any) => k.event),
              ...target.erasures.map((e: any) => e.event),
            ]
            const event = all[pick % carried.length]
            const names = Object.keys(event)
            const name = names[memberPick % names.length]!
            if (remove) delete event[name]
            else event[name] = changed(event[name])
            const tampered = await verifyPackage(target)
            expect(tampered.valid, `${remove ? 'removing' : 'changing'} ${name} of ${event.id} (${query})`).to.equal(
              false,
            )
          } finally {
            await api.close()
          }
        },
      ),
      {numRuns: 12},
    )
  })
})
