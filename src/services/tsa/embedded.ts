/**
 * The embedded TSA (docs/api.md): created once in `<data-dir>/tsa/` and reused.
 *
 *   ca.pem   the local root CA, the trust anchor handed to auditors
 *   tsa.pem  the TSA certificate the CA issued (EKU timeStamping, critical)
 *   tsa.key  its PKCS#8 key, mode 0600
 *
 * With a database store (several processes sign as one authority) the same three texts live in the
 * database instead, kept by the store (EmbeddedTsaKeeper), created by the first process.
 *
 * The CA key is discarded once the TSA certificate is issued: it is needed for nothing else, and
 * a CA key on disk would let whoever steals it mint more "trusted" TSAs. The TSA certificate is
 * valid for 10 years; tokens stay verifiable after that because they are checked at genTime.
 */
import {randomBytes} from '../../core/crypto.js'
import {AuditError} from '../../core/errors.js'
import {
  createTsaMaterial,
  issueTimestampToken,
  verifyTimestampToken,
  type TsaMaterial,
} from '../../core/timestamp/index.js'
import type {TimestampAuthority} from './authority.js'
import {readFile} from 'node:fs/promises'
import {createDirectoryOnce} from '../../store/index.js'
import path from 'node:path'

const FILES = {caCertPem: 'ca.pem', tsaCertPem: 'tsa.pem', tsaKeyPem: 'tsa.key'} as const
const KEY_MODE = 0o600

/** Where a store other than the data directory keeps the material: `create` keeps the first one offered. */
interface EmbeddedTsaKeeper {
  /** Named in messages. */
  where: string
  read(): Promise<TsaMaterial | undefined>
  create(material: TsaMaterial): Promise<TsaMaterial>
}

export async function openEmbeddedTsa(dataDir: string, keeper?: EmbeddedTsaKeeper): Promise<TimestampAuthority> {
  const dir = keeper?.where ?? path.join(dataDir, 'tsa')
  let material: TsaMaterial
  if (keeper) {
    material = (await keeper.read()) ?? (await keeper.create(withoutCaKey(await createTsaMaterial())))
  } else {
    material = (await readMaterial(dir)) ?? (await createMaterial(dataDir, dir))
  }
  await selfTest(material, dir)
  return {
    kind: 'embedded',
    async timestamp(digest) {
      try {
        return await issueTimestampToken(material, digest, {nonce: randomBytes(8)})
      } catch (error) {
        throw new AuditError('tsa_unavailable', `the embedded TSA could not sign: ${(error as Error).message}`, {
          cause: error,
        })
      }
    },
    trustAnchorsPem: async () => [material.caCertPem],
  }
}

/** The embedded TSA of a data directory as stored, undefined when it has none (`migrate` copies it). */
export function readEmbeddedTsa(dataDir: string): Promise<TsaMaterial | undefined> {
  return readMaterial(path.join(dataDir, 'tsa'))
}

function withoutCaKey({caKeyPem: _discarded, ...material}: TsaMaterial): TsaMaterial {
  return material
}

/** The stored material, undefined when none of its files exist yet. */
async function readMaterial(dir: string): Promise<TsaMaterial | undefined> {
  const entries = await Promise.all(
    Object.entries(FILES).map(async ([field, file]) => [field, await readOptional(path.join(dir, file))] as const),
  )
  const missing = entries.filter(([, text]) => text === undefined).map(([field]) => FILES[field as keyof typeof FILES])
  if (missing.length === entries.length) return undefined
  if (missing.length > 0) {
    throw new AuditError(
      'storage_unavailable',
      `the embedded TSA in ${dir} is incomplete (missing ${missing.join(', ')}); restore it from a backup, or ` +
        `move the directory away to create a new TSA (older tokens then verify only with the old ca.pem)`,
    )
  }
  return Object.fromEntries(entries) as unknown as TsaMaterial
}

/**
 * Writes the files into a private staging directory and renames it into place: a crash never
 * leaves half a TSA, and of two processes racing, the first rename wins and the other reads it.
 */
async function createMaterial(dataDir: string, dir: string): Promise<TsaMaterial> {
  const {caKeyPem: _discarded, ...material} = await createTsaMaterial()
  const files = [
    {name: FILES.caCertPem, text: material.caCertPem, mode: 0o644},
    {name: FILES.tsaCertPem, text: material.tsaCertPem, mode: 0o644},
    {name: FILES.tsaKeyPem, text: material.tsaKeyPem, mode: KEY_MODE},
  ]
  let created: boolean
  try {
    created = await createDirectoryOnce(dataDir, path.basename(dir), files)
  } catch (error) {
    throw new AuditError(
      'storage_unavailable',
      `cannot create the embedded TSA in ${dir}: ${(error as Error).message}`,
      {cause: error},
    )
  }
  if (created) return material
  const winner = await readMaterial(dir)
  if (!winner)
    throw new AuditError(
      'storage_unavailable',
      `the embedded TSA in ${dir} was created by another process and is empty`,
    )
  return winner
}

/** Signs and verifies one token at start-up, so that damaged files fail loudly and early. */
async function selfTest(material: TsaMaterial, dir: string): Promise<void> {
  const digest = new Uint8Array(32)
  let error: string
  try {
    const issued = await issueTimestampToken(material, digest)
    error = (await verifyTimestampToken(issued.token, {digest, trustAnchorsPem: [material.caCertPem]})).error
  } catch (cause) {
    error = (cause as Error).message
  }
  if (error) throw new AuditError('storage_unavailable', `the embedded TSA in ${dir} does not work: ${error}`)
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new AuditError('storage_unavailable', `cannot read ${file}: ${(error as Error).message}`, {cause: error})
  }
}
