export {
  isSignatureJob,
  SignatureChecker,
  signatureFault,
  type SignatureContent,
  type SignatureFault,
  type SignatureJob,
  type SignatureProblem,
} from './event-signature.js'
export {
  keyEventBody,
  keyEventFacts,
  KEY_REGISTERED,
  KEY_REVOKED,
  KEYS_AGENT,
  type KeyEventFacts,
  type KeyEventKind,
} from './key-events.js'
export {keyEventConflict, KeyTimeline, type AgentKey} from './key-timeline.js'
export {signEvent, type SignEventOptions} from './sign-event.js'
export {SIGNED_FIELDS, signingInputOf} from './signing-input.js'
export {SignatureLedger, unsignedReason} from './ledger.js'
