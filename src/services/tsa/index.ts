export type {TimestampAuthority} from './authority.js'
export {openEmbeddedTsa, readEmbeddedTsa} from './embedded.js'
export {externalTsa, type ExternalTsaOptions} from './external.js'
export {directoryAnchors, EXTERNAL_ANCHORS_FILE, storeAnchors, withKnownAnchors, type AnchorRecord} from './anchors.js'
