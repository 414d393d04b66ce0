/**
 * JWK files of agents' signing keys: `agent-keys generate` writes them, `agent-keys add` and
 * `ingest --sign-with` read them.
 */
import {readFile, writeFile} from 'node:fs/promises'
import {AuditError} from '../core/errors.js'
import {JwsError} from '../core/jws/errors.js'
import {parsePrivateJwk, parsePublicJwk, type PrivateSigningJwk, type SigningJwk} from '../core/jws/jwk.js'
import {publicJwkOf} from '../core/crypto.js'
import {cannotRead} from './next-step.js'

async function readJson(file: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new AuditError(
      'validation_error',
      cannotRead(file, error, 'a JWK file, such as one that agent-keys generate writes'),
    )
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new AuditError('validation_error', `${file} is not JSON (a JWK is a JSON object)`)
  }
}

function keyError(file: string, error: unknown): unknown {
  return error instanceof JwsError && error.code === 'bad_jwk'
    ? new AuditError('validation_error', `the JWK in ${file} ${error.message}`)
    : error
}

/** The private signing key of a JWK file. */
export async function readPrivateJwk(file: string): Promise<PrivateSigningJwk> {
  const value = await readJson(file)
  try {
    return parsePrivateJwk(value)
  } catch (error) {
    throw keyError(file, error)
  }
}

/** The public key of a JWK file, private (its public part, recomputed from `d`) or public. */
export async function readPublicJwk(file: string): Promise<SigningJwk> {
  const value = await readJson(file)
  try {
    return Object.hasOwn(value as object, 'd') ? publicJwkOf(parsePrivateJwk(value)) : parsePublicJwk(value)
  } catch (error) {
    throw keyError(file, error)
  }
}

/** Writes a private JWK to a new file only its owner can read (mode 0600); an existing file is kept. */
export async function writePrivateJwk(file: string, jwk: PrivateSigningJwk): Promise<void> {
  try {
    await writeFile(file, `${JSON.stringify(jwk, null, 2)}\n`, {mode: 0o600, flag: 'wx'})
  } catch (error) {
    const exists = (error as NodeJS.ErrnoException).code === 'EEXIST'
    const why = exists ? 'the file exists (a key is never overwritten)' : (error as Error).message
    throw new AuditError('validation_error', `cannot write ${file}: ${why}`)
  }
}
