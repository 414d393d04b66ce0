/**
 * The log's Ed25519 key as a COSE_Key (RFC 9052 section 7, RFC 9053 section 7.2: kty OKP, crv
 * Ed25519) and as the COSE Key Set that GET /.well-known/scitt-keys serves (SCRAPI). Its `kid` is
 * the RFC 9679 COSE Key Thumbprint, which SCRAPI recommends: anyone holding the public key
 * recomputes it, so a receipt's `kid` names the key without a registry.
 */
import {sha256} from '../crypto.js'
import {decodeCbor, encodeCbor} from './cbor.js'
import {ALG} from './sign1.js'
import {CoseError} from './errors.js'

/** COSE_Key labels and values (RFC 9052 section 7.1, RFC 9053 sections 7.1 and 7.2). */
export const KEY = {kty: 1, kid: 2, alg: 3, crv: -1, x: -2} as const
const KTY_OKP = 1
const CRV_ED25519 = 6

function requireEd25519(publicKey: Uint8Array): void {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32)
    throw new RangeError('an Ed25519 public key is 32 bytes')
}

/**
 * RFC 9679 section 3: SHA-256 over the deterministic encoding (RFC 8949 section 4.2.1) of the
 * key's required parameters only; for OKP those are kty, crv and x.
 */
export function coseKeyThumbprint(publicKey: Uint8Array): Buffer {
  requireEd25519(publicKey)
  return sha256(
    encodeCbor(
      new Map<number, unknown>([
        [KEY.kty, KTY_OKP],
        [KEY.crv, CRV_ED25519],
        [KEY.x, publicKey],
      ]),
    ),
  )
}

/** The COSE_Key of an Ed25519 public key, with its thumbprint as `kid` and `alg` EdDSA. */
export function ed25519CoseKey(publicKey: Uint8Array): Map<number, unknown> {
  requireEd25519(publicKey)
  return new Map<number, unknown>([
    [KEY.kty, KTY_OKP],
    [KEY.kid, coseKeyThumbprint(publicKey)],
    [KEY.alg, ALG.EdDSA],
    [KEY.crv, CRV_ED25519],
    [KEY.x, publicKey],
  ])
}

/** A COSE_KeySet (RFC 9052 section 7): an array of COSE_Keys. */
export function encodeKeySet(publicKeys: readonly Uint8Array[]): Uint8Array {
  return encodeCbor(publicKeys.map(ed25519CoseKey))
}

/** The Ed25519 public keys of a COSE Key Set, each with the `kid` it states; other keys are skipped. */
export function decodeKeySet(bytes: Uint8Array): Array<{kid?: Uint8Array; publicKey: Uint8Array}> {
  const set = decodeCbor(bytes)
  if (!Array.isArray(set)) throw new CoseError('malformed', 'a COSE Key Set is an array of COSE_Keys')
  return set.flatMap((key: unknown) => {
    if (!(key instanceof Map) || key.get(KEY.kty) !== KTY_OKP || key.get(KEY.crv) !== CRV_ED25519) return []
    const x = key.get(KEY.x)
    const kid = key.get(KEY.kid)
    if (!(x instanceof Uint8Array) || x.length !== 32) return []
    return [{publicKey: x, ...(kid instanceof Uint8Array ? {kid} : {})}]
  })
}
