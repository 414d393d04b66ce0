import {Args, Flags} from '@oclif/core'
import {AuditCommand} from '../cli/base.js'
import {formatEvents} from '../cli/format.js'
import {AuditError} from '../core/errors.js'

export default class Search extends AuditCommand {
  static override description =
    'Full-text search over events: every term must match; "quoted phrases" match as a phrase'

  static override examples = ['<%= config.bin %> search read_file', `<%= config.bin %> search '"delete user" prod'`]

  static override args = {query: Args.string({description: 'search terms', required: true})}

  static override flags = {
    limit: Flags.string({description: 'at most this many results (1..1000)', default: '100'}),
    offset: Flags.string({description: 'skip this many results', default: '0'}),
  }

  async run() {
    const {args, flags} = await this.parse(Search)
    if (args.query.trim() === '')
      throw new AuditError(
        'validation_error',
        'the search query is blank: give one or more terms, for example audit-trail search read_file',
      )
    const result = await this.withClient(flags, (client) =>
      client.search({q: args.query, limit: flags.limit, offset: flags.offset}),
    )
    if (!this.jsonEnabled()) {
      this.log(formatEvents(result.results))
      this.log(`${result.results.length} of ${result.total} matching events`)
    }
    return result
  }
}
