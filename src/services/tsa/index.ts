export type {TimestampAuthority} from './authority.js'
export {openEmbeddedTsa} from './embedded.js'
export {externalTsa, type ExternalTsaOptions} from './external.js'
export {EXTERNAL_ANCHORS_FILE, withKnownAnchors} from './anchors.js'
