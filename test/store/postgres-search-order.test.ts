import {expect} from 'chai'
import type {EventInput} from '../../src/core/types.js'
import {openAudit, type AuditServices} from '../../src/services/audit.js'
import {SEARCHED_FIELDS} from '../../src/store/event-row.js'
import {SCHEMA_VERSION} from '../../src/store/postgres/migrations.js'
import {searchDocument} from '../../src/store/postgres/search-text.js'
import {makeEvent} from '../support/harness.js'
import {postgresPerTest, rowsOf} from '../support/stores.js'

/** The first position of each token of a tsvector literal. */
function positions(document: string): Map<string, number> {
  const found = new Map<string, number>()
  for (const match of document.matchAll(/'([^' ]+)':(\d+)/g)) found.set(match[1]!, Number(match[2]))
  return found
}

describe('the PostgreSQL search document follows SEARCHED_FIELDS', () => {
  it('places each searched field in the declared order, one word of each', () => {
    const event = makeEvent({
      agent_id: 'agentword',
      action_type: 'typeword',
      action_name: 'nameword',
      action_status: 'statusword',
      labels: {team: 'labelword'},
      input: 'inputword',
      output: {o: 'outputword'},
      metadata: ['metadataword'],
      error: 'errorword',
    })
    const words: Record<string, string> = {
      agent_id: 'agentword',
      action_type: 'typeword',
      action_name: 'nameword',
      action_status: 'statusword',
      labels: 'labelword',
      input: 'inputword',
      output: 'outputword',
      metadata: 'metadataword',
      error: 'errorword',
    }
    const at = positions(searchDocument(event as unknown as EventInput))
    const order = SEARCHED_FIELDS.map((field) => at.get(words[field.name]!))
    expect(order.every((position) => position !== undefined)).to.equal(true)
    expect([...order].sort((a, b) => a! - b!)).to.deep.equal(order)
    expect(SEARCHED_FIELDS.map((field) => field.name)).to.have.members(Object.keys(words))
  })

  it('folds tokens as unicode61 does: lower case, and without marks outside ASCII', () => {
    // Marks as precomposed letters and as combining ones (U+0301, U+0308); ß has no lower-case change.
    const input = 'READ_File MiXeD42 Café NAÏVE Ångström e\u0301te\u0308 Straße'
    const at = positions(searchDocument(makeEvent({input}) as unknown as EventInput))
    for (const token of ['read', 'file', 'mixed42', 'cafe', 'naive', 'angstrom', 'ete', 'straße'])
      expect(at.has(token), token).to.equal(true)
    for (const token of ['READ', 'File', 'MiXeD42', 'café', 'Café', 'naïve', 'ångström'])
      expect(at.has(token), token).to.equal(false)
  })
})

describe('the PostgreSQL migration to schema 9', function () {
  let services: AuditServices | undefined
  const fresh = postgresPerTest(async () => {
    await services?.close()
    services = undefined
  })

  const sql = (text: string) => rowsOf(fresh.url, text)

  it('rebuilds the search column of a schema 8 database in the declared order', async () => {
    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    await services.ingest.recordBatch([makeEvent({input: 'payload words', error: 'failure words'})])
    await services.close()
    services = undefined
    const document = async () => String((await sql('SELECT search::text AS s FROM events'))[0]!.s)
    const rebuilt = await document()
    // What schema 8 wrote: error before the payload members.
    await sql(`UPDATE events SET search = $$'failure':1 'words':2,5 'payload':4 'failure words' 'payload words'$$`)
    await sql('UPDATE schema_version SET version = 8')

    services = await openAudit({dataDir: fresh.dir, databaseUrl: fresh.url})
    expect(await sql('SELECT version FROM schema_version')).to.deep.equal([{version: SCHEMA_VERSION}])
    expect(await document()).to.equal(rebuilt)
    const found = await services.store.searchEvents({terms: ['failure words']}, {limit: 10, offset: 0})
    expect(found.total).to.equal(1)
  })
})
