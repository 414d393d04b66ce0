import {expect} from 'chai'
import {gzipSync} from 'node:zlib'
import {validateEvent} from '../../../src/core/event/index.js'
import {AuditError} from '../../../src/core/errors.js'
import type {IngestService} from '../../../src/services/ingest.js'
import {exportTraces, type SpanEventRecorder} from '../../../src/services/otlp/export.js'

// Checked by tsc: the route can hand the ingest service itself to exportTraces.
export const ingestServiceRecords = (service: IngestService): SpanEventRecorder => service

/** A recorder that validates like POST /v1/batch and keeps what it accepts. */
function validatingRecorder(): SpanEventRecorder & {recorded: unknown[]; calls: number[]} {
  const recorder = {
    recorded: [] as unknown[],
    calls: [] as number[],
    async recordElements(bodies: unknown[]) {
      recorder.calls.push(bodies.length)
      const results = bodies.map((body) => {
        try {
          recorder.recorded.push(
            validateEvent(body, {now: new Date(), generateId: () => '01890a5d-ac96-774b-bcce-b302099a8057'}).event,
          )
          return {status: 201}
        } catch (error) {
          return {status: 400, error: (error as AuditError).toBody().error}
        }
      })
      return {results}
    },
  }
  return recorder
}

function jsonRequest(spans: Array<Record<string, unknown>>): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({resourceSpans: [{scopeSpans: [{spans}]}]}))
}

describe('services/otlp/export (POST /v1/traces without HTTP)', () => {
  it('records one event per span and answers full success', async () => {
    const recorder = validatingRecorder()
    const body = jsonRequest([{name: 'a', spanId: '00f067aa0ba902b7'}, {name: 'b'}])
    const result = await exportTraces({body, contentType: 'application/json', contentEncoding: undefined}, recorder)
    expect(result).to.deep.equal({body: '{}', contentType: 'application/json', acceptedSpans: 2, rejectedSpans: 0})
    expect(recorder.recorded.map((e) => (e as {action_name: string}).action_name)).to.deep.equal(['a', 'b'])
  })

  it('counts the spans the recorder rejects and explains them in English', async () => {
    const rejectEven: SpanEventRecorder = {
      async recordElements(bodies) {
        // 400 (invalid) and 409 (conflict) are rejections; 200 (idempotent retry) and 201 are not.
        return {
          results: bodies.map((_, i) =>
            i % 4 === 0
              ? {status: 400, error: {message: 'agent_id is required'}}
              : i % 4 === 2
                ? {status: 409, error: {message: 'an event with id x already exists'}}
                : {status: i % 3 === 0 ? 200 : 201},
          ),
        }
      },
    }
    const spans = Array.from({length: 9}, (_, i) => ({
      name: `s${i}`,
      spanId: `00000000000000${String(i).padStart(2, '0')}`,
    }))
    const result = await exportTraces(
      {body: jsonRequest(spans), contentType: 'application/json', contentEncoding: undefined},
      rejectEven,
    )
    expect(result.acceptedSpans).to.equal(4)
    expect(result.rejectedSpans).to.equal(5)
    expect(JSON.parse(result.body as string)).to.deep.equal({
      partialSuccess: {
        rejectedSpans: '5',
        errorMessage:
          '5 of 9 spans rejected: span 0000000000000000 "s0": agent_id is required; ' +
          'span 0000000000000002 "s2": an event with id x already exists; ' +
          'span 0000000000000004 "s4": agent_id is required; and 2 more',
      },
    })
  })

  it('records a request of any size in one call, so that it is recorded whole or not at all', async () => {
    // In chunks (of POST /v1/batch's 1,000), a storage failure on a later one would answer 503 -
    // "nothing was recorded" - after the earlier ones were, and the exporter's retry duplicate them.
    const recorder = validatingRecorder()
    const spans = Array.from({length: 2001}, (_, i) => ({name: `s${i}`}))
    const result = await exportTraces(
      {body: jsonRequest(spans), contentType: 'application/json', contentEncoding: undefined},
      recorder,
    )
    expect(recorder.calls).to.deep.equal([2001])
    expect(result.acceptedSpans).to.equal(2001)
    expect((recorder.recorded[2000] as {action_name: string}).action_name).to.equal('s2000')
  })

  it('answers an empty request with success without calling the recorder', async () => {
    const recorder = validatingRecorder()
    const result = await exportTraces(
      {body: new Uint8Array(0), contentType: 'application/x-protobuf', contentEncoding: undefined},
      recorder,
    )
    expect(result).to.include({acceptedSpans: 0, rejectedSpans: 0, contentType: 'application/x-protobuf'})
    expect(recorder.calls).to.deep.equal([])
  })

  it('reads gzip and applies the size limit after inflating', async () => {
    const recorder = validatingRecorder()
    const body = gzipSync(jsonRequest([{name: 'zipped'}]))
    const result = await exportTraces({body, contentType: 'application/json', contentEncoding: 'gzip'}, recorder)
    expect(result.acceptedSpans).to.equal(1)
    const big = gzipSync(jsonRequest(Array.from({length: 100}, () => ({name: 'x'.repeat(100)}))))
    try {
      await exportTraces(
        {body: big, contentType: 'application/json', contentEncoding: 'gzip', maxBytes: 4096},
        recorder,
      )
      expect.fail('accepted a body over the limit')
    } catch (error) {
      expect((error as AuditError).code).to.equal('payload_too_large')
    }
  })

  it('throws for requests it cannot read and records nothing', async () => {
    const recorder = validatingRecorder()
    const cases: Array<[Parameters<typeof exportTraces>[0], string]> = [
      [{body: jsonRequest([]), contentType: 'text/plain', contentEncoding: undefined}, 'unsupported_media_type'],
      [{body: jsonRequest([]), contentType: 'application/json', contentEncoding: 'br'}, 'unsupported_media_type'],
      [
        {body: new TextEncoder().encode('{'), contentType: 'application/json', contentEncoding: undefined},
        'invalid_json',
      ],
      [
        {body: jsonRequest([{traceId: 'abc'}]), contentType: 'application/json', contentEncoding: undefined},
        'validation_error',
      ],
      [
        {body: new Uint8Array([0x0a, 0x09]), contentType: 'application/x-protobuf', contentEncoding: undefined},
        'validation_error',
      ],
    ]
    for (const [request, code] of cases) {
      try {
        await exportTraces(request, recorder)
        expect.fail(`accepted ${code}`)
      } catch (error) {
        expect(error).to.be.instanceOf(AuditError)
        expect((error as AuditError).code).to.equal(code)
      }
    }
    expect(recorder.calls).to.deep.equal([])
  })

  it('lets a storage failure through, so that the client retries', async () => {
    const failing: SpanEventRecorder = {
      async recordElements() {
        throw new AuditError('storage_unavailable', 'the journal could not be written')
      },
    }
    try {
      await exportTraces(
        {body: jsonRequest([{name: 'a'}]), contentType: 'application/json', contentEncoding: undefined},
        failing,
      )
      expect.fail('swallowed the storage failure')
    } catch (error) {
      expect((error as AuditError).code).to.equal('storage_unavailable')
    }
  })
})
