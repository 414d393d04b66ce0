import {Args} from '@oclif/core'
import {AuditCommand} from '../../cli/base.js'
import {formatEvent} from '../../cli/format.js'

export default class EventsGet extends AuditCommand {
  static override description = 'Show one event by id'

  static override notFound = '`audit-trail events list` lists the stored events with their ids'

  static override args = {id: Args.string({description: 'event id (UUID)', required: true})}

  async run() {
    const {args, flags} = await this.parse(EventsGet)
    const event = await this.withClient(flags, (client) => client.getEvent(args.id))
    if (!this.jsonEnabled()) this.log(formatEvent(event))
    return event
  }
}
