/** The refusal of an append to a sealed trail (docs/trails.md, Sealing), the same from every store. */
import {AuditError} from '../errors.js'

export function trailSealedError(name: string): AuditError {
  return new AuditError(
    'trail_sealed',
    `trail ${name} is sealed: it takes no more events, and stays readable and verifiable; record into another trail`,
  )
}
