/**
 * Forwarding positions in the database (docs/forwarding.md), with a lease per destination: a
 * process sends to a destination only while it holds the lease, renews it well before it ends,
 * and its position is saved only while it holds it, so that a process that lost the lease (paused,
 * cut off) cannot move a position back after another took over.
 */
import type {ForwardingPosition, ForwardingPositions} from '../store.js'
import type {Query} from './database.js'

interface PositionRow {
  destination: string
  trail: string
  url: string
  position: string
  updated_at: Date
  last_error: string | null
  last_error_at: Date | null
}

export class PostgresForwarding implements ForwardingPositions {
  constructor(private readonly query: Query) {}

  async list(): Promise<ForwardingPosition[]> {
    const rows = await this.query<PositionRow>('SELECT * FROM forwarding_positions ORDER BY destination, trail')
    return rows.map((row) => ({
      destination: row.destination,
      trail: row.trail,
      url: row.url,
      position: Number(row.position),
      updated_at: row.updated_at.toISOString(),
      ...(row.last_error === null ? {} : {last_error: row.last_error}),
      ...(row.last_error_at === null ? {} : {last_error_at: row.last_error_at.toISOString()}),
    }))
  }

  async save(position: ForwardingPosition, holder: string): Promise<boolean> {
    const rows = await this.query(
      `WITH held AS (
        SELECT 1 FROM forwarding_leases WHERE destination = $1 AND holder = $7 AND lease_until > clock_timestamp()
      )
      INSERT INTO forwarding_positions (destination, trail, url, position, updated_at, last_error, last_error_at)
      SELECT $1, $2, $3, $4, $5, $6, $8 WHERE EXISTS (SELECT 1 FROM held)
      ON CONFLICT (destination, trail) DO UPDATE SET url = excluded.url, position = excluded.position,
        updated_at = excluded.updated_at, last_error = excluded.last_error, last_error_at = excluded.last_error_at
      RETURNING destination`,
      [
        position.destination,
        position.trail,
        position.url,
        position.position,
        position.updated_at,
        position.last_error ?? null,
        holder,
        position.last_error_at ?? null,
      ],
    )
    return rows.length === 1
  }

  async claim(destination: string, holder: string, leaseMs: number): Promise<boolean> {
    // One statement: a second process waits for the first's row lock, then sees its lease.
    const rows = await this.query(
      `INSERT INTO forwarding_leases (destination, holder, lease_until)
      VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond')
      ON CONFLICT (destination) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
      WHERE forwarding_leases.holder = excluded.holder OR forwarding_leases.lease_until <= clock_timestamp()
      RETURNING destination`,
      [destination, holder, leaseMs],
    )
    return rows.length === 1
  }

  async release(destination: string, holder: string): Promise<void> {
    await this.query('DELETE FROM forwarding_leases WHERE destination = $1 AND holder = $2', [destination, holder])
  }
}
