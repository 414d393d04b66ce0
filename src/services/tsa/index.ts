export type {TimestampAuthority} from './authority.js'
export {openEmbeddedTsa} from './embedded.js'
export {externalTsa, type ExternalTsaOptions} from './external.js'
