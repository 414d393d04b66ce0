/**
 * Several logs in one service (docs/trails.md): the trails a service holds,
 * each a full transparency log with its own services. The HTTP server and the CLI reach a trail's
 * services only through this interface.
 */
import type {AuditServices} from './audit.js'

/** A trail as `GET /v1/trails` lists it. */
export interface TrailInfo {
  name: string
  origin: string
  /** The trail's log key as a C2SP signed-note verifier key. */
  verifier_key: string
  tree_size: number
  sealed: boolean
}

export interface CreateTrailOptions {
  /** The checkpoint origin; default: the service's origin followed by `/NAME`. */
  origin?: string
  /** PostgreSQL only: a database of its own for the trail (`trails create --in-database URL`). */
  inDatabase?: string
}

export interface Trails {
  /** Trail `default`, always open. */
  readonly default: AuditServices
  /** Every trail's name, `default` first, then by name. */
  names(): Promise<string[]>
  /** The trail's services, opened on first use and kept; `trail_not_found` (404) for an unknown trail. */
  open(name: string): Promise<AuditServices>
  /** The trails among `names` (every trail when undefined), as `GET /v1/trails` lists them. */
  list(names?: readonly string[]): Promise<TrailInfo[]>
  /** A new trail: 400 for a bad name, 409 `conflict` when it exists; nothing half-made after a crash. */
  create(name: string, options?: CreateTrailOptions): Promise<TrailInfo>
  /** Seals the trail (a final checkpoint; appends then answer 409 `trail_sealed`); sealing again changes nothing. */
  seal(name: string): Promise<TrailInfo>
  /**
   * Told of each trail but `default` opened, and at once of those already open (the server starts
   * its stream and forwarders for it).
   */
  onOpen(listener: (name: string, services: AuditServices) => void): void
  close(): Promise<void>
}
