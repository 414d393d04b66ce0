export {RESERVED_AGENT_PREFIX, validateEvent, type ValidateOptions} from './validate.js'
export {canonicalizeEvent} from './canonical.js'
export {CLIENT_FIELDS, HASHED_FIELDS, STORED_FIELDS} from './fields.js'
export {computeEventHash, hashedContentOf, sameSentFields} from './hash.js'
export {normalizeTimestamp, type TimestampResult} from './timestamp.js'
export {approximateJsonSize, checkJsonValue, jsonEqual, MAX_JSON_DEPTH} from './json.js'
export {checkText, countCodePoints, hasControlCharacter, isWellFormedText, type TextRule} from './text.js'
export {
  requestedAgents,
  requestedIds,
  sequenceEvents,
  type LogState,
  type SequenceOutcome,
  type SequenceRequest,
  type SequenceResult,
} from './sequence.js'
export {
  commitmentFault,
  commitmentOf,
  commitPayload,
  payloadMembersOf,
  SALT_PATTERN,
  type CommitmentFault,
} from './commitment.js'
export {PAYLOAD_MEMBERS, UNHASHED_FIELDS} from './fields.js'
export {canonicalizeValue} from './canonical.js'
