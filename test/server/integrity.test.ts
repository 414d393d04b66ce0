import {expect} from 'chai'
import {hashLeaf, verifyConsistency, verifyInclusion} from '../../src/core/merkle/index.js'
import {makeEvent, type TestApi} from '../support/harness.js'
import {describeOnTrails, startApiOn} from '../support/trails.js'
import {forEachStore} from '../support/stores.js'

const bytes = (hex: string) => Buffer.from(hex, 'hex')

describeOnTrails('integrity endpoints', (trail) =>
  forEachStore((store) => {
    let api: TestApi
    beforeEach(async () => {
      api = await startApiOn(trail, {store})
      await api.request('POST', '/v1/batch', {
        body: Array.from({length: 7}, (_, i) =>
          makeEvent({agent_id: i % 2 ? 'odd' : 'even', action_name: `step-${i}`}),
        ),
      })
    })
    afterEach(async () => {
      await api.close()
    })

    it('verifies one agent (valid form) and all agents', async () => {
      const one = await api.request('GET', '/v1/verify?agent_id=even')
      expect(one.status).to.equal(200)
      expect(one.body).to.have.all.keys('valid', 'agent_id', 'events_checked', 'head_sequence', 'head_hash')
      expect(one.body).to.include({valid: true, agent_id: 'even', events_checked: 4, head_sequence: 4})
      const all = await api.request('GET', '/v1/verify')
      expect(all.body).to.deep.equal({valid: true, agents_checked: 2, events_checked: 7, invalid_agents: []})
      const unknown = await api.request('GET', '/v1/verify?agent_id=nobody')
      expect(unknown.status).to.equal(404)
      expect(unknown.body.error.code).to.equal('not_found')
    })

    it('gives a Merkle root, inclusion proofs and consistency proofs that verify independently', async () => {
      const root = (await api.request('GET', '/v1/merkle/root')).body
      expect(root).to.include({tree_size: 7, algorithm: 'rfc9162-sha256'})
      const events = (await api.request('GET', '/v1/events')).body
      for (const event of events) {
        const proof = (await api.request('GET', `/v1/merkle/proof/${event.id}`)).body
        expect(proof).to.include({
          event_id: event.id,
          leaf_index: event.index,
          tree_size: 7,
          merkle_root: root.merkle_root,
        })
        expect(proof.leaf_hash).to.equal(Buffer.from(hashLeaf(bytes(event.hash))).toString('hex'))
        verifyInclusion(
          proof.leaf_index,
          proof.tree_size,
          bytes(proof.leaf_hash),
          proof.audit_path.map(bytes),
          bytes(root.merkle_root),
        )
      }
      const older = (await api.request('GET', `/v1/merkle/proof/${events[2].id}?tree_size=4`)).body
      verifyInclusion(2, 4, hashLeaf(bytes(events[2].hash)), older.audit_path.map(bytes), bytes(older.merkle_root))
      const consistency = (await api.request('GET', '/v1/merkle/consistency?first=3')).body
      expect(consistency).to.include({first: 3, second: 7, second_root: root.merkle_root})
      verifyConsistency(
        3,
        7,
        bytes(consistency.first_root),
        bytes(consistency.second_root),
        consistency.proof.map(bytes),
      )
    })

    it('refuses bad proof parameters', async () => {
      const [event] = (await api.request('GET', '/v1/events?limit=1')).body
      expect((await api.request('GET', `/v1/merkle/proof/${event.id}?tree_size=99`)).status).to.equal(400)
      expect((await api.request('GET', `/v1/merkle/proof/${event.id}?tree_size=x`)).status).to.equal(400)
      expect((await api.request('GET', '/v1/merkle/proof/0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8000')).status).to.equal(404)
      expect((await api.request('GET', '/v1/merkle/consistency')).status).to.equal(400)
      expect((await api.request('GET', '/v1/merkle/consistency?first=8')).status).to.equal(400)
      expect((await api.request('GET', '/v1/merkle/consistency?first=5&second=4')).status).to.equal(400)
      // The details name the parameter that is out of range.
      const fields = async (query: string) =>
        (await api.request('GET', `/v1/merkle/consistency?${query}`)).body.error.details.map((d: any) => d.field)
      expect(await fields('first=3&second=99999')).to.deep.equal(['second'])
      expect(await fields('first=8')).to.deep.equal(['first'])
      expect(await fields('first=5&second=4')).to.deep.equal(['first'])
      expect(await fields('first=99&second=99')).to.deep.equal(['second', 'first'])
    })

    it('exports a package that carries events, chains and proofs, with a download name', async () => {
      const res = await api.request('GET', '/v1/export?agent_id=odd')
      expect(res.status).to.equal(200)
      expect(res.headers.get('content-disposition')).to.match(
        /^attachment; filename="audit-trail-\d{8}T\d{6}Z\.atrail\.json"$/,
      )
      const pkg = res.body
      expect(pkg).to.include({format: 'atrail-evidence', version: 1})
      expect(pkg.merkle).to.include({algorithm: 'rfc9162-sha256', tree_size: 7})
      expect(pkg.events.map((e: any) => e.sequence)).to.deep.equal([1, 2, 3])
      expect(pkg.chains).to.have.all.keys('odd')
      expect(pkg.chains.odd).to.include({
        first_sequence: 1,
        last_sequence: 3,
        anchor_prev_hash: '0'.repeat(64),
        head_hash: pkg.events[2].hash,
      })
      for (const event of pkg.events) {
        const proof = pkg.proofs[event.id]
        verifyInclusion(
          proof.leaf_index,
          7,
          hashLeaf(bytes(event.hash)),
          proof.audit_path.map(bytes),
          bytes(pkg.merkle.root),
        )
      }
      expect(pkg.timestamp).to.equal(null)
      expect((await api.request('GET', '/v1/export?since=garbage')).status).to.equal(400)
    })
  }),
)
