/**
 * U+0000 on PostgreSQL (docs/postgres.md, "Set-up and schema"): what its columns show, and that every
 * read, headers included, gives the event back as recorded.
 */
import {expect} from 'chai'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {eventColumns} from '../../src/store/postgres/schema.js'
import {makeEvent} from '../support/harness.js'
import {postgresPerTest, rowsOf} from '../support/stores.js'

describe('U+0000 in the PostgreSQL store', function () {
  let services: AuditServices | undefined
  const fresh = postgresPerTest(async () => {
    await services?.close()
    services = undefined
  })

  const rows = (text: string, params: unknown[] = []) => rowsOf(fresh.url, text, params)

  it('leaves the filtered columns holding it empty and gives headers the labels as recorded', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const labels = {env: 'a\u0000b', team: 'red'}
    await services.ingest.recordOne(makeEvent({labels, session_id: 's\u0000', trace_id: '\u0000', span_id: 'x\u0000'}))
    const [row] = await rows('SELECT labels, session_id, trace_id, span_id FROM events')
    expect(row).to.deep.equal({labels: {team: 'red'}, session_id: null, trace_id: null, span_id: 'x\uFFFD'})
    const headers = []
    for await (const batch of services.store.scanEventHeaders()) headers.push(...batch)
    expect(headers.map((header) => header.labels)).to.deep.equal([labels])
  })

  it('keeps the text \\u0000 (six characters) as it is in the jsonb columns', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const input = {text: '\\u0000 and \\\\u0000', nul: '\u0000', [`\\u0000`]: 1}
    await services.ingest.recordOne(makeEvent({labels: {env: '\\u0000'}, input}))
    const [row] = await rows('SELECT labels, input FROM events')
    expect(row).to.deep.equal({labels: {env: '\\u0000'}, input: {...input, nul: '\uFFFD'}})
    expect((await services.query.listEvents({'label.env': '\\u0000'})).events[0]!.input).to.deep.equal(input)
  })

  it('writes the search column made before the lock as the one made from the stored event', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    const input = {zeta: 'last word', a: {nested: 'first word'}, [`k\u0000`]: 'nul key'}
    const {results} = await services.ingest.recordBatch([
      makeEvent({input, labels: {b: 'two', a: 'one'}}),
      makeEvent({input: {zeta: 1, a: 'x'}, error: 'e\u0000'}),
    ])
    const written = await rows('SELECT search::text AS search FROM events ORDER BY "index"')
    const stored = results.map((result) => (result as {event: Parameters<typeof eventColumns>[0]}).event)
    const expected = stored.map((event) => eventColumns(event).at(-1))
    const normalised = await rows('SELECT unnest($1::text[])::tsvector::text AS search', [expected])
    expect(written).to.deep.equal(normalised)
  })
})
