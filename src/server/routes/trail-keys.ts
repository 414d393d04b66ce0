/**
 * GET /.well-known/scitt-keys of a service of several trails: every trail's log key in one COSE Key
 * Set (RFC 9052 section 7), so that a verifier finds the key of any receipt the service issued
 * (docs/api.md, "Trails"). Public, as each key set was: it holds public keys only.
 */
import Router from '@koa/router'
import {
  coseKeyThumbprint,
  ed25519CoseKey,
  encodeCbor,
  encodeKeySet,
  encodeProblem,
  PROBLEM_MEDIA_TYPE,
} from '../../core/cose/index.js'
import {parseVerifierKey} from '../../core/note/index.js'
import type {Trails} from '../../services/trails.js'
import {SCITT_KEYS_PATH} from './receipts.js'

async function publicKeys(trails: Trails): Promise<Buffer[]> {
  return (await trails.list()).map((trail) => parseVerifierKey(trail.verifier_key).publicKey)
}

export function trailKeyRoutes(trails: Trails): Router {
  const router = new Router()

  router.get(SCITT_KEYS_PATH, async (ctx) => {
    ctx.type = 'application/cbor'
    ctx.body = Buffer.from(encodeKeySet(await publicKeys(trails)))
  })

  // SCRAPI "Individual Transparency Service Key": the kid (a byte string) in base64url.
  router.get(`${SCITT_KEYS_PATH}/:kid`, async (ctx) => {
    const key = (await publicKeys(trails)).find((k) => coseKeyThumbprint(k).toString('base64url') === ctx.params.kid)
    if (key) {
      ctx.type = 'application/cbor'
      ctx.body = Buffer.from(encodeCbor(ed25519CoseKey(key)))
      return
    }
    ctx.status = 404
    ctx.type = PROBLEM_MEDIA_TYPE
    ctx.body = Buffer.from(
      encodeProblem({
        title: 'No such key',
        detail: `no trail of this service has a key with the kid ${ctx.params.kid}`,
      }),
    )
  })

  return router
}
