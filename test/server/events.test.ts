import {expect} from 'chai'
import canonicalize from 'canonicalize'
import {createHash} from 'node:crypto'
import zlib from 'node:zlib'
import {makeEvent, type TestApi} from '../support/harness.js'
import {describeOnTrails, startApiOn} from '../support/trails.js'
import {forEachStore} from '../support/stores.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The contract's hash recomputed independently: canonicalize (RFC 8785) + node's own SHA-256. */
/** docs/verification.md 2, as an outsider writes it: the hashed form in JCS, then SHA-256. */
function independentHash(event: Record<string, unknown>): string {
  const {hash: _hash, index: _index, salts: _salts, erased: _erased, ...content} = event
  if (content.commitments) for (const member of ['input', 'output', 'metadata', 'error']) delete content[member]
  return createHash('sha256').update(canonicalize(content)!, 'utf8').digest('hex')
}

function independentCommitment(salt: string, value: unknown): string {
  return createHash('sha256').update(Buffer.from(salt, 'hex')).update(canonicalize(value)!, 'utf8').digest('hex')
}

function expectError(response: {status: number; body: any}, status: number, code: string): void {
  expect(response.status, JSON.stringify(response.body)).to.equal(status)
  expect(response.body).to.have.property('error')
  expect(response.body.error.code).to.equal(code)
  expect(response.body.error.message).to.be.a('string').and.not.equal('')
}

describeOnTrails('ingest and query over HTTP', (trail) =>
  forEachStore((store) => {
    let api: TestApi
    beforeEach(async () => {
      api = await startApiOn(trail, {store})
    })
    afterEach(async () => {
      await api.close()
    })

    describe('POST /v1/events', () => {
      it('stores an event with the service fields and a hash any JCS library reproduces', async () => {
        const res = await api.request('POST', '/v1/events', {
          body: makeEvent({labels: {env: 'prod'}, input: {path: '/etc/hosts'}}),
        })
        expect(res.status).to.equal(201)
        const event = res.body
        expect(event.id).to.match(UUID)
        expect(event.sequence).to.equal(1)
        expect(event.prev_hash).to.equal('0'.repeat(64))
        expect(event.index).to.equal(0)
        expect(event.action_status).to.equal('success')
        expect(event.labels).to.deep.equal({env: 'prod'})
        expect(event.timestamp).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
        expect(event.recorded_at).to.match(/Z$/)
        expect(event.hash).to.equal(independentHash(event))
        expect(event.salts.input).to.match(/^[0-9a-f]{64}$/)
        expect(event.commitments).to.deep.equal({input: independentCommitment(event.salts.input, {path: '/etc/hosts'})})
      })

      it("chains an agent's events and keeps a global index across agents", async () => {
        const a1 = (await api.request('POST', '/v1/events', {body: makeEvent({agent_id: 'a'})})).body
        const b1 = (await api.request('POST', '/v1/events', {body: makeEvent({agent_id: 'b'})})).body
        const a2 = (await api.request('POST', '/v1/events', {body: makeEvent({agent_id: 'a'})})).body
        expect([a1.index, b1.index, a2.index]).to.deep.equal([0, 1, 2])
        expect([a1.sequence, b1.sequence, a2.sequence]).to.deep.equal([1, 1, 2])
        expect(a2.prev_hash).to.equal(a1.hash)
        expect(b1.prev_hash).to.equal('0'.repeat(64))
      })

      it('normalises the timestamp to UTC with milliseconds', async () => {
        const res = await api.request('POST', '/v1/events', {body: makeEvent({timestamp: '2026-11-21T23:45:00+02:00'})})
        expect(res.status).to.equal(201)
        expect(res.body.timestamp).to.equal('2026-11-21T21:45:00.000Z')
      })

      it('answers 400 with field details for each broken rule and records nothing', async () => {
        const cases: Array<[Record<string, unknown>, string]> = [
          [{action_type: 'TOOL_CALL', action_name: 'x'}, 'agent_id'],
          [makeEvent({action_type: 'tool_call'}), 'action_type'],
          [makeEvent({action_status: 'OK'}), 'action_status'],
          [makeEvent({timestamp: '2026-11-21T10:00:00'}), 'timestamp'],
          [makeEvent({id: 'not-a-uuid'}), 'id'],
          [makeEvent({labels: {'bad key': 'v'}}), 'labels'],
          [makeEvent({duration_ms: -1}), 'duration_ms'],
          [makeEvent({surprise: 1}), 'surprise'],
          [makeEvent({agent_id: 'a\u0001b'}), 'agent_id'],
        ]
        for (const [body, field] of cases) {
          const res = await api.request('POST', '/v1/events', {body})
          expectError(res, 400, 'validation_error')
          expect(
            res.body.error.details.map((d: {field: string}) => d.field).join(' '),
            JSON.stringify(body),
          ).to.contain(field)
        }
        expect((await api.request('GET', '/v1/events')).body).to.deep.equal([])
      })

      it('answers 400 invalid_json, 415 and 413 for broken bodies', async () => {
        expectError(
          await api.request('POST', '/v1/events', {
            raw: '{"agent_id": ',
            headers: {'content-type': 'application/json'},
          }),
          400,
          'invalid_json',
        )
        // An empty body and one of blanks are alike: no JSON text. (POST /v1/policy/check without
        // a body checks the service's own policies, so only blanks are wrong there.)
        for (const route of ['/v1/events', '/v1/batch', '/v1/policy/check']) {
          for (const raw of route === '/v1/policy/check' ? ['   '] : ['', '   ']) {
            const res = await api.request('POST', route, {raw, headers: {'content-type': 'application/json'}})
            expectError(res, 400, 'invalid_json')
            expect(res.body.error.message, `${route} ${JSON.stringify(raw)}`).to.match(
              raw === '' ? /empty/ : /not valid JSON/,
            )
          }
        }
        expectError(
          await api.request('POST', '/v1/events', {raw: 'agent_id=x', headers: {'content-type': 'text/plain'}}),
          415,
          'unsupported_media_type',
        )
        const huge = JSON.stringify(makeEvent({input: 'x'.repeat(1024 * 1024 + 10)}))
        expectError(
          await api.request('POST', '/v1/events', {raw: huge, headers: {'content-type': 'application/json'}}),
          413,
          'payload_too_large',
        )
        expect(await api.services.tree.size()).to.equal(0)
      })

      it(
        'reads gzip, deflate and br bodies, and answers 400 for one that does not decompress and 415 for an unknown ' +
          'encoding',
        async () => {
          const json = Buffer.from(JSON.stringify(makeEvent()))
          const packed = {gzip: zlib.gzipSync(json), deflate: zlib.deflateSync(json), br: zlib.brotliCompressSync(json)}
          for (const [encoding, body] of Object.entries(packed)) {
            const ok = await api.request('POST', '/v1/events', {
              raw: body,
              headers: {'content-type': 'application/json', 'content-encoding': encoding},
            })
            expect(ok.status, encoding).to.equal(201)
            for (const route of ['/v1/events', '/v1/batch', '/v1/policy/check']) {
              const bad = await api.request('POST', route, {
                raw: Buffer.from('not compressed at all'),
                headers: {'content-type': 'application/json', 'content-encoding': encoding},
              })
              expectError(bad, 400, 'invalid_json')
              expect(bad.body.error.message, `${encoding} ${route}`).to.contain(encoding)
            }
          }
          expectError(
            await api.request('POST', '/v1/events', {
              raw: json,
              headers: {'content-type': 'application/json', 'content-encoding': 'compress'},
            }),
            415,
            'unsupported_media_type',
          )
          expect(await api.services.tree.size()).to.equal(3)
          expect(api.logged, 'nothing unexpected was logged').to.deep.equal([])
        },
      )

      it('is idempotent for a retried id and refuses a conflicting one with 409', async () => {
        const id = '0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8091'
        const first = await api.request('POST', '/v1/events', {body: makeEvent({id})})
        expect(first.status).to.equal(201)
        const retry = await api.request('POST', '/v1/events', {body: makeEvent({id: id.toUpperCase()})})
        expect(retry.status).to.equal(200)
        expect(retry.body).to.deep.equal(first.body)
        expectError(
          await api.request('POST', '/v1/events', {body: makeEvent({id, action_name: 'other'})}),
          409,
          'conflict',
        )
        expect(await api.services.tree.size()).to.equal(1)
      })
    })

    describe('POST /v1/batch', () => {
      it('answers 201 with one result per element when all succeed', async () => {
        const res = await api.request('POST', '/v1/batch', {body: [makeEvent(), makeEvent({agent_id: 'b'})]})
        expect(res.status).to.equal(201)
        expect(res.body.map((r: any) => [r.index, r.status, r.event.index])).to.deep.equal([
          [0, 201, 0],
          [1, 201, 1],
        ])
      })

      it('answers 207 on partial failure, records the valid ones in order, and never blocks them', async () => {
        const id = '0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8092'
        await api.request('POST', '/v1/events', {body: makeEvent({id})})
        const res = await api.request('POST', '/v1/batch', {
          body: [
            makeEvent({action_name: 'one'}),
            {agent_id: 'x'},
            makeEvent({id, action_name: 'changed'}),
            makeEvent({id}),
            makeEvent({action_name: 'two'}),
          ],
        })
        expect(res.status).to.equal(207)
        expect(res.body.map((r: any) => r.status)).to.deep.equal([201, 400, 409, 200, 201])
        expect(res.body[1].error.code).to.equal('validation_error')
        expect(res.body[2].error.code).to.equal('conflict')
        expect(res.body[0].event.sequence).to.equal(2)
        expect(res.body[4].event.sequence).to.equal(3)
        expect(res.body[4].event.prev_hash).to.equal(res.body[0].event.hash)
      })

      it('refuses an empty array and a non-array (400), and more than 1000 events (413)', async () => {
        expectError(await api.request('POST', '/v1/batch', {body: []}), 400, 'validation_error')
        expectError(await api.request('POST', '/v1/batch', {body: makeEvent()}), 400, 'validation_error')
        const tooMany = await api.request('POST', '/v1/batch', {body: Array.from({length: 1001}, () => makeEvent())})
        expectError(tooMany, 413, 'payload_too_large')
        expect(tooMany.body.error.message).to.equal('the batch has 1001 events; a batch carries at most 1000')
        expect(await api.services.tree.size()).to.equal(0)
        expect(
          (await api.request('POST', '/v1/batch', {body: Array.from({length: 1000}, () => makeEvent())})).status,
        ).to.equal(201)
      })
    })

    describe('GET /v1/events', () => {
      beforeEach(async () => {
        await api.request('POST', '/v1/batch', {
          body: [
            makeEvent({agent_id: 'a', timestamp: '2026-11-01T00:00:00Z', labels: {env: 'prod', team: 'x'}}),
            makeEvent({
              agent_id: 'b',
              action_type: 'LLM_CALL',
              timestamp: '2026-11-02T00:00:00Z',
              labels: {env: 'dev'},
            }),
            makeEvent({
              agent_id: 'a',
              action_type: 'LLM_CALL',
              timestamp: '2026-11-03T00:00:00Z',
              labels: {env: 'prod'},
            }),
          ],
        })
      })

      it('filters with AND, since inclusive and until exclusive, labels exact, index ascending', async () => {
        const indexes = async (query: string) => {
          const res = await api.request('GET', `/v1/events${query}`)
          expect(res.status, res.text).to.equal(200)
          return res.body.map((e: any) => e.index)
        }
        expect(await indexes('')).to.deep.equal([0, 1, 2])
        expect(await indexes('?agent_id=a')).to.deep.equal([0, 2])
        expect(await indexes('?action_type=LLM_CALL')).to.deep.equal([1, 2])
        expect(await indexes('?agent_id=a&action_type=LLM_CALL')).to.deep.equal([2])
        expect(await indexes('?since=2026-11-02T00:00:00Z')).to.deep.equal([1, 2])
        expect(await indexes('?until=2026-11-02T00:00:00Z')).to.deep.equal([0])
        expect(await indexes('?label.env=prod')).to.deep.equal([0, 2])
        expect(await indexes('?label.env=prod&label.team=x')).to.deep.equal([0])
        expect(await indexes('?label.env=pro')).to.deep.equal([])
      })

      it('filters by trace_id and session_id, exact match, so that an agent run is one query', async () => {
        const trace = '4bf92f3577b34da6a3ce929d0e0e4736'
        await api.request('POST', '/v1/batch', {
          body: [
            makeEvent({agent_id: 'a', trace_id: trace, session_id: 's-1'}),
            makeEvent({agent_id: 'b', trace_id: trace}),
            makeEvent({agent_id: 'a', trace_id: trace.toUpperCase(), session_id: 's-10'}),
          ],
        })
        const indexes = async (query: string) => {
          const res = await api.request('GET', `/v1/events?${query}`)
          expect(res.status, res.text).to.equal(200)
          return [res.body.map((e: any) => e.index), res.headers.get('x-total-count')]
        }
        expect(await indexes(`trace_id=${trace}`)).to.deep.equal([[3, 4], '2'])
        expect(await indexes(`trace_id=${trace}&agent_id=b`)).to.deep.equal([[4], '1'])
        expect(await indexes('session_id=s-1')).to.deep.equal([[3], '1'])
        expect(await indexes(`session_id=s-10&trace_id=${trace}`)).to.deep.equal([[], '0'])
        expectError(await api.request('GET', `/v1/events?trace_id=${trace}&trace_id=x`), 400, 'validation_error')
        expectError(await api.request('GET', '/v1/events?session_id=a&session_id=b'), 400, 'validation_error')
      })

      it('compares bounds between two milliseconds exactly (times are stored to the millisecond)', async () => {
        // Index 3 at 23:59:59.999 (sent with more digits: stored truncated to the millisecond).
        await api.request('POST', '/v1/events', {
          body: makeEvent({agent_id: 'ms', timestamp: '2026-11-03T23:59:59.9997Z'}),
        })
        const indexes = async (query: string) =>
          (await api.request('GET', `/v1/events?agent_id=ms&${query}`)).body.map((e: any) => e.index)
        expect(await indexes('since=2026-11-03T23:59:59.999Z')).to.deep.equal([3])
        expect(await indexes('since=2026-11-03T23:59:59.9990000Z')).to.deep.equal([3])
        expect(await indexes('since=2026-11-03T23:59:59.9995Z')).to.deep.equal([])
        expect(await indexes('until=2026-11-03T23:59:59.999Z')).to.deep.equal([])
        expect(await indexes('until=2026-11-03T23:59:59.9991Z')).to.deep.equal([3])
        expect(await indexes('until=2026-11-04T00:59:59.9991%2B01:00')).to.deep.equal([3])
      })

      it('pages with limit and offset and reports X-Total-Count', async () => {
        const res = await api.request('GET', '/v1/events?limit=1&offset=1')
        expect(res.body.map((e: any) => e.index)).to.deep.equal([1])
        expect(res.headers.get('x-total-count')).to.equal('3')
      })

      it('refuses bad limits, offsets and times with 400', async () => {
        for (const query of [
          'limit=0',
          'limit=1001',
          'limit=abc',
          'limit=1.5',
          'offset=-1',
          'since=yesterday',
          'until=2026-11-02T00:00:00',
          'since=9999-12-31T23:59:00-01:00',
        ]) {
          expectError(await api.request('GET', `/v1/events?${query}`), 400, 'validation_error')
        }
      })

      it('returns one event by id, and 404 for unknown or malformed ids', async () => {
        const [first] = (await api.request('GET', '/v1/events?limit=1')).body
        expect((await api.request('GET', `/v1/events/${first.id}`)).body).to.deep.equal(first)
        expectError(await api.request('GET', '/v1/events/0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8000'), 404, 'not_found')
        expectError(await api.request('GET', '/v1/events/nope'), 404, 'not_found')
      })
    })

    describe('search, agents, stats, config, health', () => {
      beforeEach(async () => {
        await api.request('POST', '/v1/batch', {
          body: [
            makeEvent({agent_id: 'alpha', action_name: 'read_file', input: {path: '/etc/Passwd'}}),
            makeEvent({
              agent_id: 'beta',
              action_type: 'LLM_CALL',
              action_name: 'chat',
              action_status: 'error',
              error: 'rate limited by provider',
            }),
            makeEvent({agent_id: 'alpha', action_name: 'write_file', labels: {ticket: 'OPS-42'}}),
          ],
        })
      })

      it('searches case-insensitively with AND terms and quoted phrases', async () => {
        const hits = async (q: string) => {
          const res = await api.request('GET', `/v1/search?q=${encodeURIComponent(q)}`)
          expect(res.status, res.text).to.equal(200)
          expect(res.body).to.include({query: q, limit: 100, offset: 0})
          return res.body.results.map((e: any) => e.index)
        }
        expect(await hits('PASSWD')).to.deep.equal([0])
        expect(await hits('read_file')).to.deep.equal([0])
        expect(await hits('alpha file')).to.deep.equal([0, 2])
        expect(await hits('alpha chat')).to.deep.equal([])
        expect(await hits('"rate limited"')).to.deep.equal([1])
        expect(await hits('"limited rate"')).to.deep.equal([])
        expect(await hits('ops-42')).to.deep.equal([2])
        expectError(await api.request('GET', '/v1/search?q=%20'), 400, 'validation_error')
        expectError(await api.request('GET', '/v1/search'), 400, 'validation_error')
        const twice = await api.request('GET', '/v1/search?q=alpha&q=file')
        expectError(twice, 400, 'validation_error')
        expect(twice.body.error.details).to.deep.equal([{field: 'q', message: 'must be given at most once'}])
      })

      it('lists agents ordered by id with counts and chain status', async () => {
        const res = await api.request('GET', '/v1/agents')
        expect(res.body.map((a: any) => [a.agent_id, a.event_count, a.last_sequence, a.chain_valid])).to.deep.equal([
          ['alpha', 2, 2, true],
          ['beta', 1, 1, true],
        ])
        expect(res.body[0]).to.have.all.keys(
          'agent_id',
          'event_count',
          'first_activity',
          'last_activity',
          'last_sequence',
          'head_hash',
          'chain_valid',
        )
      })

      it('reports statistics', async () => {
        const {body} = await api.request('GET', '/v1/stats')
        expect(body).to.include({
          total_events: 3,
          events_last_24h: 3,
          active_agents: 2,
          total_agents: 2,
          chain_health: 1,
          tree_size: 3,
        })
        expect(body.merkle_root).to.match(/^[0-9a-f]{64}$/)
        expect(body.by_action_type).to.deep.equal({TOOL_CALL: 2, LLM_CALL: 1})
        expect(body.by_action_status).to.deep.equal({success: 2, error: 1})
      })

      it('serves /healthz, the dashboard config, security headers and 404 bodies', async () => {
        const health = await api.request('GET', '/healthz')
        expect(health.body.status).to.equal('ok')
        // The embedded store's capacity is reported beside it (fields added, never the status changed);
        // a database server has no capacity of the service's.
        if (store === 'sqljs') {
          expect(health.body.storage).to.include({backend: 'embedded', capacity_bytes: 2 * 1024 ** 3, state: 'ok'})
          expect(Object.keys(health.body)).to.deep.equal(['status', 'storage'])
        } else {
          expect(Object.keys(health.body)).to.deep.equal(['status'])
        }
        const config = await api.request('GET', '/v1/dashboard/config')
        expect(config.body.service).to.equal('audit-trail')
        expect(config.body.features).to.include({
          auth: false,
          otlp: false,
          tsa: 'embedded',
          stream: true,
          search: true,
          policy: true,
          export: true,
          timestamps: true,
        })
        expect(config.headers.get('x-content-type-options')).to.equal('nosniff')
        expect(config.headers.get('cache-control')).to.equal('no-store')
        expectError(await api.request('GET', '/v1/nothing-here'), 404, 'not_found')
      })
    })
  }),
)
