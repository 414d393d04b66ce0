/**
 * The base of `trails create | list | seal` (docs/trails.md): a store or a server, and the trail
 * named as an argument, never by --trail (refused on the command line; AUDIT_TRAIL_TRAIL, meant
 * for the data commands, is left aside).
 */
import {AuditError} from '../core/errors.js'
import {AuditCommand, trailFlag} from './base.js'

export abstract class TrailCommand extends AuditCommand {
  static override baseFlags = {...AuditCommand.baseFlags, trail: {...trailFlag, hidden: true}}
  static override notFound = 'audit-trail trails list shows the trails there are'

  /** The store flags without a trail. */
  protected withoutTrail<F extends {trail?: string}>(flags: F): F {
    if (this.given('trail'))
      throw new AuditError(
        'validation_error',
        '--trail is for the data commands: trails commands name the trail itself',
      )
    return {...flags, trail: undefined}
  }
}
