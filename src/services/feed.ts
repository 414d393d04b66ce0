/**
 * The feed of recorded events and issued timestamps, in the order they became durable. The
 * WebSocket stream subscribes to it; ingest and timestamping publish to it.
 */
import {EventEmitter} from 'node:events'
import type {StoredEvent, TimestampRecord} from '../core/types.js'

export interface FeedEvents {
  events: [StoredEvent[]]
  timestamp: [Omit<TimestampRecord, 'token'> & {token?: string}]
}

export class Feed extends EventEmitter<FeedEvents> {
  constructor() {
    super()
    // Every stream subscriber listens here; the stream bounds their number, not this emitter.
    this.setMaxListeners(0)
  }
}
