import {expect} from 'chai'
import {AuditError} from '../../../src/core/errors.js'
import {parseErasureRequest, parseRedaction} from '../../../src/core/erasure/index.js'

const ID = '0190C1A2-7B3C-7D4E-8F90-0123456789AB'

function problems(body: unknown): {field: string; message: string}[] {
  try {
    parseErasureRequest(body)
  } catch (error) {
    expect(error).to.be.instanceOf(AuditError)
    expect((error as AuditError).code).to.equal('validation_error')
    return (error as AuditError).details ?? []
  }
  return expect.fail('accepted')
}
const fields = (body: unknown) => problems(body).map((p) => p.field)

describe('core/erasure parseErasureRequest (docs/api.md, POST /v1/erasures)', () => {
  it('takes ids (lower-cased, each once) or a filter, all members by default, in their documented order', () => {
    expect(parseErasureRequest({ids: [ID, ID.toLowerCase()], reason: 'Art. 17'})).to.deep.equal({
      ids: [ID.toLowerCase()],
      members: ['input', 'output', 'metadata', 'error'],
      reason: 'Art. 17',
    })
    const request = parseErasureRequest({
      filter: {agent_id: 'bot', since: '2026-11-01', labels: {customer: 'c-1'}},
      members: ['error', 'input'],
      reason: 'r',
      requested_by: 'dpo@example.com',
    })
    expect(request).to.deep.equal({
      filter: {agent_id: 'bot', since: '2026-11-01T00:00:00.000Z', labels: {customer: 'c-1'}},
      members: ['input', 'error'],
      reason: 'r',
      requested_by: 'dpo@example.com',
    })
  })

  it('refuses a request without a reason, or with a blank or overlong one', () => {
    expect(fields({ids: [ID]})).to.deep.equal(['reason'])
    expect(fields({ids: [ID], reason: '  '})).to.deep.equal(['reason'])
    expect(fields({ids: [ID], reason: 'x'.repeat(1025)})).to.deep.equal(['reason'])
    expect(parseErasureRequest({ids: [ID], reason: 'x'.repeat(1024)}).reason).to.have.length(1024)
  })

  it('refuses an empty filter, one with unknown or malformed members, and neither or both forms', () => {
    expect(fields({filter: {}, reason: 'r'})).to.deep.equal(['filter'])
    expect(fields({filter: {labels: {}}, reason: 'r'})).to.deep.equal(['filter'])
    expect(fields({filter: {agent: 'x'}, reason: 'r'})).to.deep.equal(['filter.agent'])
    expect(fields({filter: {since: 'yesterday'}, reason: 'r'})).to.deep.equal(['filter.since'])
    expect(fields({filter: {labels: {'bad key': 'v'}}, reason: 'r'})).to.deep.equal(['filter.labels.bad key'])
    expect(fields({filter: {agent_id: 7}, reason: 'r'})).to.deep.equal(['filter.agent_id'])
    expect(fields({reason: 'r'})).to.deep.equal(['ids'])
    expect(fields({ids: [ID], filter: {agent_id: 'a'}, reason: 'r'})).to.deep.equal(['filter'])
  })

  it('refuses unknown members, an empty member list, 10,001 ids, ids that are no event id, unknown fields', () => {
    expect(fields({ids: [ID], members: ['input', 'prompt'], reason: 'r'})).to.deep.equal(['members[1]'])
    expect(fields({ids: [ID], members: [], reason: 'r'})).to.deep.equal(['members'])
    const many = Array.from({length: 10_001}, (_, i) => `0190c1a2-7b3c-7d4e-8f90-${String(i).padStart(12, '0')}`)
    expect(fields({ids: many, reason: 'r'})).to.deep.equal(['ids'])
    expect(parseErasureRequest({ids: many.slice(1), reason: 'r'}).ids).to.have.length(10_000)
    expect(fields({ids: [], reason: 'r'})).to.deep.equal(['ids'])
    expect(fields({ids: ['not-an-id'], reason: 'r'})).to.deep.equal(['ids[0]'])
    expect(fields({ids: [ID], reason: 'r', why: 'x'})).to.deep.equal(['why'])
    expect(fields([ID])).to.deep.equal(['body'])
  })
})

describe('core/erasure parseRedaction (docs/api.md, GET /v1/export?redact=)', () => {
  it('reads a comma-separated list in documented order, none when absent', () => {
    expect(parseRedaction({redact: 'output, input'})).to.deep.equal(['input', 'output'])
    expect(parseRedaction({})).to.deep.equal([])
  })

  it('refuses an unknown member, an empty list and a repeated parameter', () => {
    for (const redact of ['inputs', '', 'input,', ['input', 'output']]) {
      expect(() => parseRedaction({redact}), JSON.stringify(redact)).to.throw(AuditError, /redact/)
    }
  })
})
