/**
 * The search thread (started by search-index.ts): holds the SearchDatabase of every store of this
 * process that indexes text, and answers their requests in the order they were posted, so a search
 * posted after some events were fed sees those events.
 */
import {parentPort} from 'node:worker_threads'
import {SearchDatabase} from './search-database.js'
import type {SearchRequest, SearchResponse} from './search-index.js'
import type {SearchSource} from './search-text.js'

const databases = new Map<number, Promise<SearchDatabase>>()

async function handle(request: SearchRequest): Promise<unknown> {
  if (request.op === 'open') {
    databases.set(request.store, SearchDatabase.open(request.dir))
    return undefined
  }
  const database = await databases.get(request.store)
  if (database === undefined) throw new Error(`no search index ${request.store}`)
  switch (request.op) {
    case 'add':
      database.add(request.sources)
      return request.sources.length
    case 'addJson':
      database.add(request.rows.map((row) => JSON.parse(row) as SearchSource))
      return request.rows.length
    case 'missing':
      return database.missing(request.storeId, request.end, request.epoch)
    case 'beginErasure':
      await database.beginErasure(request.from, request.to)
      return undefined
    case 'eraseBatch':
      database.eraseBatch(request.before, request.after)
      return request.after.length
    case 'endErasure':
      database.endErasure()
      return undefined
    case 'search':
      return database.search(request.match, request.limit, request.offset)
    case 'save':
      await database.save()
      return undefined
    case 'close':
      databases.delete(request.store)
      database.close()
      return undefined
  }
}

// One request at a time, in order: handle() awaits only the database's opening, which must not
// let a later request overtake an earlier one.
let queue: Promise<unknown> = Promise.resolve()
parentPort!.on('message', (request: SearchRequest) => {
  queue = queue.then(async () => {
    let response: SearchResponse
    try {
      response = {id: request.id, result: await handle(request)}
    } catch (error) {
      response = {id: request.id, error: error instanceof Error ? error.message : String(error)}
    }
    parentPort!.postMessage(response)
  })
})
