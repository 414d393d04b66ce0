/**
 * The log's identity in the database (docs/postgres.md, "The log's identity"): `embedded_tsa`,
 * `tsa_anchors` and `log_key`, read and written as one. Adopting an identity (`migrate`) writes all
 * of it in one transaction or, when the database holds another embedded TSA or log key, nothing.
 */
import type {TsaMaterial} from '../../core/timestamp/index.js'
import type {IdentityConflict, LogIdentityMaterial} from '../identity.js'
import type {Query} from './database.js'

export async function readTsaMaterial(query: Query): Promise<TsaMaterial | undefined> {
  const [row] = await query<{ca_cert_pem: string; tsa_cert_pem: string; tsa_key_pem: string}>(
    'SELECT ca_cert_pem, tsa_cert_pem, tsa_key_pem FROM embedded_tsa',
  )
  return row === undefined
    ? undefined
    : {caCertPem: row.ca_cert_pem, tsaCertPem: row.tsa_cert_pem, tsaKeyPem: row.tsa_key_pem}
}

/** The embedded TSA unless the database holds one: of processes starting together the first insert wins. */
async function insertTsaMaterial(query: Query, material: TsaMaterial): Promise<void> {
  await query(
    'INSERT INTO embedded_tsa (ca_cert_pem, tsa_cert_pem, tsa_key_pem) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [material.caCertPem, material.tsaCertPem, material.tsaKeyPem],
  )
}

/** Saves `material` unless another process saved its own first; resolves with the one kept. */
export async function saveTsaMaterial(query: Query, material: TsaMaterial): Promise<TsaMaterial> {
  await insertTsaMaterial(query, material)
  return (await readTsaMaterial(query))!
}

export async function readLogKey(query: Query): Promise<string | undefined> {
  const [row] = await query<{private_key_pem: string}>('SELECT private_key_pem FROM log_key')
  return row?.private_key_pem
}

/** The log key unless the database holds one: of processes starting together the first insert wins. */
async function insertLogKey(query: Query, pem: string): Promise<void> {
  await query('INSERT INTO log_key (private_key_pem) VALUES ($1) ON CONFLICT DO NOTHING', [pem])
}

/** The log's signing key, `create`d and saved unless another process saved its own first. */
export async function logKey(query: Query, create: () => string): Promise<string> {
  await insertLogKey(query, create())
  return (await readLogKey(query))!
}

export async function readTsaAnchors(query: Query): Promise<string[]> {
  const rows = await query<{pem: string}>('SELECT pem FROM tsa_anchors ORDER BY position')
  return rows.map((row) => row.pem)
}

/** Adds the certificates not recorded yet, in order; one statement, so concurrent writers agree. */
export async function addTsaAnchors(query: Query, pems: readonly string[]): Promise<void> {
  if (pems.length === 0) return
  await query(
    `INSERT INTO tsa_anchors (pem) SELECT pem FROM unnest($1::text[]) WITH ORDINALITY AS u(pem, n)
    ORDER BY n ON CONFLICT (pem) DO NOTHING`,
    [pems],
  )
}

const same = (a: string, b: string) => a.replace(/\r\n/g, '\n').trim() === b.replace(/\r\n/g, '\n').trim()

/**
 * Inside a transaction: writes `identity` where the database has none of its parts yet, or returns
 * the parts it holds that differ (then writes nothing). The tables are locked against concurrent
 * creation (a `serve` making its embedded TSA meanwhile) until the transaction ends.
 */
export async function adoptIdentity(query: Query, identity: LogIdentityMaterial): Promise<IdentityConflict> {
  await query('LOCK TABLE embedded_tsa, log_key, tsa_anchors IN SHARE ROW EXCLUSIVE MODE')
  const tsa = await readTsaMaterial(query)
  const key = await readLogKey(query)
  const conflict: IdentityConflict = []
  const offered = identity.tsa
  if (
    offered &&
    tsa &&
    !(
      same(tsa.caCertPem, offered.caCertPem) &&
      same(tsa.tsaCertPem, offered.tsaCertPem) &&
      same(tsa.tsaKeyPem, offered.tsaKeyPem)
    )
  )
    conflict.push('embedded TSA')
  if (identity.logKeyPem !== undefined && key !== undefined && !same(key, identity.logKeyPem)) conflict.push('log key')
  if (conflict.length > 0) return conflict
  if (offered && !tsa) await insertTsaMaterial(query, offered)
  if (identity.logKeyPem !== undefined && key === undefined) await insertLogKey(query, identity.logKeyPem)
  await addTsaAnchors(query, identity.tsaAnchors)
  return []
}
