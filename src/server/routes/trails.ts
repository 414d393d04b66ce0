/**
 * The trails of the service (docs/api.md, "Trails"; docs/trails.md): GET and POST /v1/trails,
 * GET /v1/trails/NAME, POST /v1/trails/NAME/seal (creating and sealing need `admin`, checked by the
 * auth middleware). A key bound to trails sees only those, and any other answers 404 as unknown.
 */
import Router from '@koa/router'
import type {Context} from 'koa'
import {AuditError, validationError, type FieldError} from '../../core/errors.js'
import {checkTrailName} from '../../core/trail/name.js'
import type {CreateTrailOptions, Trails} from '../../services/trails.js'
import {apiKeyOf} from '../middleware/auth.js'
import {jsonBody} from '../middleware/json-body.js'
import {mayOpen, trailNotFound} from '../trail-access.js'

const MAX_TRAIL_BYTES = 16 * 1024
/**
 * No `in_database` over HTTP: a key would have the server connect wherever it says; a trail in a
 * database of its own is made with `trails create --in-database` on the service database (docs/trails.md).
 */
const FIELDS: ReadonlySet<string> = new Set(['name', 'origin'])

/** `{"name", "origin"?}`: the name checked by `Trails.create`, the rest here. */
function createRequest(body: unknown): {name: string; options: CreateTrailOptions} {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AuditError('validation_error', 'the body must be an object: {"name": "...", "origin": "..."}')
  const fields = body as Record<string, unknown>
  const errors: FieldError[] = Object.keys(fields)
    .filter((field) => !FIELDS.has(field))
    .map((field) => ({field, message: 'is not a field of a trail (name, origin)'}))
  for (const field of FIELDS) {
    if (field === 'name' ? typeof fields.name !== 'string' : !['string', 'undefined'].includes(typeof fields[field]))
      errors.push({field, message: field === 'name' ? 'is required, a string' : 'must be a string'})
  }
  if (errors.length > 0) throw validationError(errors)
  const options: CreateTrailOptions = {}
  if (fields.origin !== undefined) options.origin = fields.origin as string
  return {name: fields.name as string, options}
}

/** The trail of the path, when the key may open it: 400 for a bad name, 404 otherwise. */
async function visibleTrail(trails: Trails, ctx: Context): Promise<string> {
  const name = checkTrailName(ctx.params.name!)
  if (!mayOpen(apiKeyOf(ctx), name) || !(await trails.names()).includes(name)) throw trailNotFound(name)
  return name
}

export function trailRoutes(trails: Trails): Router {
  const router = new Router()

  router.get('/v1/trails', async (ctx) => {
    ctx.body = await trails.list(apiKeyOf(ctx)?.trails)
  })

  router.post('/v1/trails', jsonBody(MAX_TRAIL_BYTES), async (ctx) => {
    const {name, options} = createRequest(ctx.request.body)
    checkTrailName(name)
    const key = apiKeyOf(ctx)
    // A key bound to trails could not open the trail it made: it may make none.
    if (!mayOpen(key, name))
      throw new AuditError('forbidden', `the API key opens only the trails ${key!.trails!.join(', ')}`)
    ctx.status = 201
    ctx.body = await trails.create(name, options)
  })

  router.get('/v1/trails/:name', async (ctx) => {
    const name = await visibleTrail(trails, ctx)
    ctx.body = (await trails.list([name]))[0]
  })

  router.post('/v1/trails/:name/seal', async (ctx) => {
    ctx.body = await trails.seal(await visibleTrail(trails, ctx))
  })

  return router
}
