/** Markers for the erasure tests: a token no other text of the log contains. */
import {randomBytes} from 'node:crypto'

/** One search term, one grep pattern: letters and digits only, so FTS keeps it a single token. */
export const newMarker = (): string => `zq${randomBytes(8).toString('hex')}qz`
