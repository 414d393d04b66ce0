/**
 * The HTTP face of a witness (C2SP tlog-witness): POST /add-checkpoint with a text body, answered
 * with the witness's status and body (services/witness.ts). Built by a function, like the log's app.
 */
import Koa from 'koa'
import type {Witness} from '../services/witness.js'

/** A request body is an old size, at most 63 proof lines and a checkpoint: far below this. */
const MAX_BODY_BYTES = 64 * 1024

export function createWitnessApp(
  witness: Witness,
  logLine: (line: string) => void = (line) => console.error(line),
): Koa {
  const app = new Koa()
  app.silent = true
  app.use(async (ctx) => {
    if (ctx.path !== '/add-checkpoint') {
      ctx.status = 404
      ctx.body = 'not found: this witness serves POST /add-checkpoint (C2SP tlog-witness)\n'
      return
    }
    if (ctx.method !== 'POST') {
      ctx.status = 405
      ctx.set('Allow', 'POST')
      ctx.body = 'add-checkpoint takes POST\n'
      return
    }
    const body = await readBody(ctx.req)
    if (body === undefined) {
      ctx.status = 413
      ctx.body = `the request body is larger than ${MAX_BODY_BYTES} bytes\n`
      return
    }
    const answer = await witness.addCheckpoint(body)
    if (answer.status !== 200 && answer.status !== 409)
      logLine(`audit-trail witness: refused (${answer.status}): ${answer.body.trim()}`)
    ctx.status = answer.status
    ctx.body = answer.body
    // Exactly the type tlog-witness names (Koa's ctx.type would add a charset to text/x.tlog.size).
    ctx.set('Content-Type', answer.contentType)
  })
  return app
}

async function readBody(request: AsyncIterable<Buffer>): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of request) {
    length += chunk.length
    if (length > MAX_BODY_BYTES) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}
