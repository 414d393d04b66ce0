/**
 * The LISTEN/NOTIFY channels (docs/postgres.md, Several writers, one log): a notification is
 * delivered at commit, in commit order, to every listening session (notify.ts listens).
 */

/** The channel every commit of events notifies, with the new size. */
export const EVENTS_CHANNEL = 'audit_trail_events'
/** The channel every issued timestamp notifies, with its position in `timestamps`. */
export const TIMESTAMP_CHANNEL = 'audit_trail_timestamps'
/** The channel every erasure's batch notifies (the page caches: services/event-queries.ts). */
export const ERASURE_CHANNEL = 'audit_trail_erasures'
