/**
 * Which events an erasure covers and what it can take from each (docs/erasure.md), as SQL
 * conditions both stores build from their own dialect's tests of a row's JSON members.
 */
import {RESERVED_AGENT_PREFIX} from '../core/event/index.js'
import type {PayloadMemberName} from '../core/types.js'

/** A dialect's tests of one row. */
export interface ErasureDialect {
  /** The row is an event of the service's own agents, which no erasure touches. */
  serviceEvent: (prefixLength: number, prefix: string) => string
  /** `commitments` names the member. */
  commits: (member: PayloadMemberName) => string
  /** `erased` names the member. */
  erased: (member: PayloadMemberName) => string
}

export interface ErasureConditions {
  /** The conditions (joined by AND) of events an erasure of `members` takes something from. */
  erasable(members: readonly PayloadMemberName[]): string[]
  /** The condition of events that hold or held one of `members`. */
  touched(members: readonly PayloadMemberName[]): string
  /** A candidate's status: service_event, hash_version_1, erase or already_erased. */
  status(members: readonly PayloadMemberName[]): string
  /** The row holds the member and commits to it: what an erasure of it takes. */
  committed(member: PayloadMemberName): string
  /** How many of `members` the row holds committed (what an erasure takes). */
  committedCount(members: readonly PayloadMemberName[]): string
}

export function erasureConditions(dialect: ErasureDialect): ErasureConditions {
  const serviceEvent = dialect.serviceEvent(RESERVED_AGENT_PREFIX.length, RESERVED_AGENT_PREFIX)
  const held = (m: PayloadMemberName) => `${m} IS NOT NULL`
  const committed = (m: PayloadMemberName) => `(${m} IS NOT NULL AND ${dialect.commits(m)})`
  const any = (members: readonly PayloadMemberName[], condition: (m: PayloadMemberName) => string) =>
    `(${members.map(condition).join(' OR ')})`
  return {
    committed,
    erasable: (members) => [`NOT ${serviceEvent}`, 'commitments IS NOT NULL', any(members, committed)],
    touched: (members) => `(${any(members, held)} OR ${any(members, dialect.erased)})`,
    status: (members) =>
      `CASE WHEN ${serviceEvent} THEN 'service_event' WHEN commitments IS NULL THEN 'hash_version_1'
        WHEN ${any(members, committed)} THEN 'erase' ELSE 'already_erased' END`,
    committedCount: (members) => members.map((m) => `(CASE WHEN ${committed(m)} THEN 1 ELSE 0 END)`).join(' + '),
  }
}
