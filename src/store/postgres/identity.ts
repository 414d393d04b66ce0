/**
 * The log's identity in the database (docs/postgres.md, "The log's identity"): `embedded_tsa`,
 * `tsa_anchors` and `log_key`, read and written as one. Adopting an identity (`migrate`) writes all
 * of it in one transaction or, when the database holds another embedded TSA or log key, nothing.
 */
import type pg from 'pg'
import type {IdentityConflict, LogIdentityMaterial} from '../identity.js'

/** A statement on the pool or on a transaction's connection, resolving with its rows. */
export type Query = <R extends pg.QueryResultRow>(sql: string, params?: unknown[]) => Promise<R[]>

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
  const [tsa] = await query<{ca_cert_pem: string; tsa_cert_pem: string; tsa_key_pem: string}>(
    'SELECT ca_cert_pem, tsa_cert_pem, tsa_key_pem FROM embedded_tsa',
  )
  const [key] = await query<{private_key_pem: string}>('SELECT private_key_pem FROM log_key')
  const conflict: IdentityConflict = []
  const offered = identity.tsa
  if (
    offered &&
    tsa &&
    !(
      same(tsa.ca_cert_pem, offered.caCertPem) &&
      same(tsa.tsa_cert_pem, offered.tsaCertPem) &&
      same(tsa.tsa_key_pem, offered.tsaKeyPem)
    )
  )
    conflict.push('embedded TSA')
  if (identity.logKeyPem !== undefined && key && !same(key.private_key_pem, identity.logKeyPem))
    conflict.push('log key')
  if (conflict.length > 0) return conflict
  if (offered && !tsa)
    await query('INSERT INTO embedded_tsa (ca_cert_pem, tsa_cert_pem, tsa_key_pem) VALUES ($1, $2, $3)', [
      offered.caCertPem,
      offered.tsaCertPem,
      offered.tsaKeyPem,
    ])
  if (identity.logKeyPem !== undefined && !key)
    await query('INSERT INTO log_key (private_key_pem) VALUES ($1)', [identity.logKeyPem])
  await addTsaAnchors(query, identity.tsaAnchors)
  return []
}
