export {eraseMembers, redactEvent, removableMembers} from './erase.js'
export {
  covers,
  ERASE_ACTION,
  ERASURE_ACTION_TYPE,
  ERASURE_AGENT,
  erasureEventBody,
  intentOf,
  RETENTION_ACTION,
  type ErasureIntent,
  type ErasureMetadata,
} from './intent.js'
export {erasureIdsOf, erasureReferenceFault} from './reference.js'
export {MAX_ERASURE_IDS, parseErasureRequest, type ErasureRequest} from './request.js'
export {parseRedaction} from './redaction.js'
export {checkDisclosure, parseDisclosures, type Disclosure, type DisclosureVerdict} from './disclosure.js'
