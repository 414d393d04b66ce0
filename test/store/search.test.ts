import {expect} from 'chai'
import fc from 'fast-check'
import type {Json, StoredEvent} from '../../src/core/types.js'
import {openPostgresStore, openSqlJsStore} from '../../src/store/index.js'
import {indexedText} from '../../src/store/search.js'
import {matchExpression} from '../../src/store/sqljs/search-text.js'
import type {EventStore} from '../../src/store/store.js'
import {createTestDatabase, forEachStore, type StoreKind} from '../support/stores.js'
import {EventMaker, removeDir, tempDir} from './support.js'

/** A store of the kind under test, on a data directory or a database of its own; `close` removes both. */
async function openStore(kind: StoreKind): Promise<{store: EventStore; close(): Promise<void>}> {
  const dir = tempDir()
  if (kind === 'sqljs') {
    const store = await openSqlJsStore({dataDir: dir})
    return {store, close: async () => (await store.close(), removeDir(dir))}
  }
  const database = await createTestDatabase()
  const store = await openPostgresStore({databaseUrl: database.url})
  return {store, close: async () => (await store.close(), await database.drop(), removeDir(dir))}
}

/** A naive reference of the search semantics: token lists per field, phrase = contiguous tokens. */
function tokens(text: string): string[] {
  return (
    text
      .normalize('NFD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  )
}

/** The texts docs/api.md searches in a JSON field: member names, strings, numbers, booleans. */
function textsOf(value: Json | undefined): string[] {
  if (value === undefined || value === null) return []
  if (Array.isArray(value)) return value.flatMap(textsOf)
  if (typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => [key, ...textsOf(item)])
  return [String(value)]
}

function referenceMatches(event: StoredEvent, terms: string[]): boolean {
  const fields = [
    [event.agent_id],
    [event.action_type],
    [event.action_name],
    [event.action_status],
    Object.values(event.labels),
    [event.error ?? ''],
    textsOf(event.input),
    textsOf(event.output),
    textsOf(event.metadata),
  ].map((parts) => tokens(parts.join(' ')))
  return terms.every((term) => {
    const phrase = tokens(term)
    if (phrase.length === 0) return false
    return fields.some((field) => field.some((_, i) => phrase.every((token, j) => field[i + j] === token)))
  })
}

describe('store search (FTS4)', () => {
  describe('matchExpression', () => {
    it('makes one quoted phrase of the tokens of each term', () => {
      expect(matchExpression(['read_file'])).to.equal('"read file"')
      expect(matchExpression(['permission denied', 'x2'])).to.equal('"permission denied" "x2"')
    })

    it('keeps FTS syntax out: quotes, stars, operators and parentheses become separators', () => {
      expect(matchExpression(['a"b*', '(or)', 'NEAR/2'])).to.equal('"a b" "or" "NEAR 2"')
    })

    it('gives undefined (nothing matches) when a term has no letter or digit', () => {
      expect(matchExpression(['ok', '!!'])).to.equal(undefined)
      expect(matchExpression(['_'])).to.equal(undefined)
      expect(matchExpression([])).to.equal(undefined)
    })
  })

  describe('indexedText', () => {
    it('takes the member names, strings, numbers and booleans of JSON in their order, not null', () => {
      expect(indexedText({path: '/tmp/a', n: 5, ok: true, none: null, list: ['x', {deep: 'y'}, 1e21, -0.5]})).to.equal(
        'path /tmp/a n 5 ok true none list x deep y 1e+21 -0.5',
      )
      expect(indexedText(null)).to.equal(null)
      expect(indexedText([null])).to.equal(null)
      expect(indexedText(undefined)).to.equal(null)
      expect(indexedText('text')).to.equal('text')
    })
  })

  forEachStore((kind) => {
    describe('searchEvents', () => {
      let store: EventStore
      let close: () => Promise<void>
      const maker = new EventMaker()
      const events = [
        maker.make({action_name: 'read_file', input: {path: '/etc/passwd'}, error: 'Permission denied while opening'}),
        maker.make({action_name: 'write_file', action_type: 'FILE_ACCESS', labels: {team: 'Payments'}}),
        maker.make({action_name: 'readfile', output: {summary: 'denied permission to Café'}}),
        maker.make({action_name: 'send_email', metadata: {path: 'not-a-key', count: 404}, action_status: 'denied'}),
        maker.make({action_name: 'read_file', agent_id: 'billing-bot'}),
      ]
      const search = async (...terms: string[]) =>
        (await store.searchEvents({terms}, {limit: 100, offset: 0})).items.map((e) => e.index)

      before(async () => {
        ;({store, close} = await openStore(kind))
        await store.appendEvents(events)
      })

      after(async () => {
        await close?.()
      })

      it('matches underscored names as written, not glued words', async () => {
        expect(await search('read_file')).to.deep.equal([0, 4])
        expect(await search('readfile')).to.deep.equal([2])
      })

      it('requires every term (AND) and matches a phrase only in order', async () => {
        expect(await search('permission denied')).to.deep.equal([0])
        expect(await search('denied permission')).to.deep.equal([2])
        expect(await search('denied', 'permission')).to.deep.equal([0, 2])
        expect(await search('read_file', 'permission')).to.deep.equal([0])
      })

      it('is case- and accent-insensitive', async () => {
        expect(await search('PERMISSION DENIED')).to.deep.equal([0])
        expect(await search('cafe')).to.deep.equal([2])
      })

      it(
        'searches agent_id, action_type, status, label values and the names and values of JSON fields, not label ' +
          'names',
        async () => {
          expect(await search('billing')).to.deep.equal([4])
          expect(await search('file_access')).to.deep.equal([1])
          expect(await search('payments')).to.deep.equal([1])
          expect(await search('team')).to.deep.equal([])
          expect(await search('passwd')).to.deep.equal([0])
          expect(await search('path')).to.deep.equal([0, 3])
          expect(await search('404')).to.deep.equal([3])
          expect(await search('count 404')).to.deep.equal([3])
          expect(await search('denied')).to.deep.equal([0, 2, 3])
        },
      )

      it('matches nothing for a term without letters or digits', async () => {
        expect(await search('!!')).to.deep.equal([])
        expect(await search('read_file', '--')).to.deep.equal([])
      })

      it('pages in index order with the total of all matches', async () => {
        const page = await store.searchEvents({terms: ['denied']}, {limit: 1, offset: 1})
        expect(page.total).to.equal(3)
        expect(page.items.map((e) => e.index)).to.deep.equal([2])
        expect(page.items[0]).to.deep.equal(events[2])
      })
    })

    it('agrees with a naive reference on random texts (property)', async () => {
      const {store, close} = await openStore(kind)
      try {
        const word = fc.constantFrom(
          'read',
          'file',
          'READ',
          'Élan',
          'elan',
          'x2',
          'a_b',
          'b-c',
          'denied',
          'ok',
          'k',
          '404',
          'true',
        )
        const text = fc
          .tuple(fc.array(word, {minLength: 1, maxLength: 4}), fc.constantFrom(' ', '_', '.', '/'))
          .map(([words, separator]) => words.join(separator))
        const maker = new EventMaker()
        const events = fc
          .sample(
            fc.record({
              action_name: text,
              error: text,
              input: fc.dictionary(fc.constantFrom('k', 'read'), fc.oneof(text, fc.constantFrom(404, 2.5, true, null))),
            }),
            60,
          )
          .map((f) => maker.make(f))
        await store.appendEvents(events)
        // The index is made from the events as stored (JSON columns as stored: a phrase spanning two
        // strings of one field follows the stored order of their keys).
        const stored: StoredEvent[] = []
        for await (const event of store.scanEvents()) stored.push(event)
        await fc.assert(
          fc.asyncProperty(fc.array(text, {minLength: 1, maxLength: 2}), async (terms) => {
            const lower = terms.map((t) => t.toLowerCase())
            const found = await store.searchEvents({terms: lower}, {limit: 1000, offset: 0})
            const expected = stored.filter((e) => referenceMatches(e, lower)).map((e) => e.index)
            expect(found.items.map((e) => e.index)).to.deep.equal(expected)
            expect(found.total).to.equal(expected.length)
          }),
          {numRuns: 150},
        )
      } finally {
        await close()
      }
    })
  })
})
