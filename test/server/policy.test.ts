import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import path from 'node:path'
import {parsePolicyDocument} from '../../src/core/policy/index.js'
import {openAudit} from '../../src/services/audit.js'
import {makeEvent, removeDir, startTestApi, tempDir, type TestApi} from '../support/harness.js'
import {createTestDatabase, forEachStore, rowsOf} from '../support/stores.js'

const RULES = [
  {name: 'chains', type: 'chain_integrity'},
  {name: 'env label', type: 'required_labels', labels: ['env']},
  {name: 'no deletes', type: 'forbidden_action', match: {action_name: 'delete_*'}},
]

describe('POST /v1/policy/check', () =>
  forEachStore((store) => {
    let api: TestApi
    afterEach(async () => {
      await api.close()
    })

    it('passes on compliant data and reports violations with exact counts', async () => {
      api = await startTestApi({store})
      await api.request('POST', '/v1/batch', {
        body: [makeEvent({labels: {env: 'prod'}}), makeEvent({labels: {env: 'dev'}})],
      })
      const ok = await api.request('POST', '/v1/policy/check', {body: {policies: RULES}})
      expect(ok.status).to.equal(200)
      expect(ok.body).to.deep.include({passed: true, events_checked: 2})
      expect(ok.body.results.map((r: any) => [r.name, r.type, r.passed, r.violation_count])).to.deep.equal([
        ['chains', 'chain_integrity', true, 0],
        ['env label', 'required_labels', true, 0],
        ['no deletes', 'forbidden_action', true, 0],
      ])
      await api.request('POST', '/v1/batch', {
        body: Array.from({length: 150}, () => makeEvent({action_name: 'delete_user'})),
      })
      const bad = await api.request('POST', '/v1/policy/check', {body: {policies: RULES}})
      expect(bad.status).to.equal(200)
      expect(bad.body.passed).to.equal(false)
      const [, labels, deletes] = bad.body.results
      expect(labels.violation_count).to.equal(150)
      expect(labels.violations).to.have.length(100)
      expect(deletes.violation_count).to.equal(150)
      expect(deletes.violations[0]).to.have.all.keys('event_id', 'agent_id', 'sequence', 'message')
      const scoped = await api.request('POST', '/v1/policy/check', {
        body: {policies: RULES, scope: {agent_id: 'nobody'}},
      })
      expect(scoped.body).to.deep.include({passed: true, events_checked: 0})
    })

    it('answers 400 naming the rule for an unknown type or a bad parameter', async () => {
      api = await startTestApi({store})
      const unknown = await api.request('POST', '/v1/policy/check', {
        body: {policies: [{name: 'x', type: 'no_such_rule'}]},
      })
      expect(unknown.status).to.equal(400)
      expect(unknown.body.error.code).to.equal('validation_error')
      expect(unknown.body.error.message).to.contain('x')
      const badParam = await api.request('POST', '/v1/policy/check', {
        body: {policies: [{name: 'rate', type: 'max_failure_rate', max: 7}]},
      })
      expect(badParam.status).to.equal(400)
      expect(badParam.body.error.message).to.contain('rate')
      const none = await api.request('POST', '/v1/policy/check', {body: {}})
      expect(none.status).to.equal(400)
    })

    it('uses the default policy of serve --policy when the request names none', async () => {
      api = await startTestApi({store, audit: {defaultPolicy: parsePolicyDocument({policies: [RULES[1]]})}})
      await api.request('POST', '/v1/events', {body: makeEvent()})
      const res = await api.request('POST', '/v1/policy/check', {
        raw: '',
        headers: {'content-type': 'application/json'},
      })
      expect(res.status, res.text).to.equal(200)
      expect(res.body.passed).to.equal(false)
      expect(res.body.results.map((r: any) => r.name)).to.deep.equal(['env label'])
      // A misspelt member is refused, not dropped in favour of the default policy.
      const typo = await api.request('POST', '/v1/policy/check', {body: {policie: [RULES[0]], scope: {agent_id: 'a'}}})
      expect(typo.status, typo.text).to.equal(400)
      expect(typo.body.error.code).to.equal('validation_error')
      expect(typo.body.error.details).to.deep.equal([
        {field: 'policie', message: 'is not a known field (allowed: policies, scope)'},
      ])
    })

    it("narrows the default policy's scope field by field with the request's scope", async () => {
      const since = '2026-01-01T00:00:00.000Z'
      api = await startTestApi({
        store,
        audit: {defaultPolicy: parsePolicyDocument({policies: [RULES[1]], scope: {since}})},
      })
      await api.request('POST', '/v1/batch', {
        body: [
          makeEvent({agent_id: 'a', timestamp: '2025-06-01T00:00:00Z'}),
          makeEvent({agent_id: 'a', timestamp: '2026-06-01T00:00:00Z'}),
          makeEvent({agent_id: 'b', timestamp: '2026-06-01T00:00:00Z'}),
        ],
      })
      // The file's since stays: only a's event of 2026 is in scope.
      const narrowed = await api.request('POST', '/v1/policy/check', {body: {scope: {agent_id: 'a'}}})
      expect(narrowed.status, narrowed.text).to.equal(200)
      expect(narrowed.body.events_checked).to.equal(1)
      // A field the request gives replaces the file's; the merged scope is checked as one.
      expect(
        (await api.request('POST', '/v1/policy/check', {body: {scope: {since: '2025-01-01T00:00:00Z'}}})).body
          .events_checked,
      ).to.equal(3)
      const empty = await api.request('POST', '/v1/policy/check', {body: {scope: {until: '2025-12-01T00:00:00Z'}}})
      expect(empty.status).to.equal(400)
      expect(empty.body.error.code).to.equal('validation_error')
    })

    it('fails chain_integrity for an agent whose stored events were tampered with', async () => {
      const dataDir = await tempDir()
      const database = store === 'postgres' ? await createTestDatabase() : undefined
      const services = await openAudit({dataDir, databaseUrl: database?.url})
      await services.ingest.recordBatch([
        makeEvent({agent_id: 'a', labels: {env: 'x'}}),
        makeEvent({agent_id: 'a', labels: {env: 'x'}}),
        makeEvent({agent_id: 'b', labels: {env: 'x'}}),
      ])
      await services.close()
      const tamper = `update events set action_name = 'changed' where "index" = 1`
      if (database) {
        await rowsOf(database.url, tamper)
      } else {
        execFileSync('sqlite3', [path.join(dataDir, 'events.sqlite'), tamper])
      }
      api = await startTestApi({dataDir, audit: {databaseUrl: database?.url}})
      const res = await api.request('POST', '/v1/policy/check', {body: {policies: RULES}})
      const chains = res.body.results[0]
      expect(chains).to.include({passed: false, violation_count: 1})
      expect(chains.violations[0]).to.include({agent_id: 'a'})
      await api.close()
      api = {
        close: async () => {
          await database?.drop()
          await removeDir(dataDir)
        },
      } as TestApi
    })
  }))
