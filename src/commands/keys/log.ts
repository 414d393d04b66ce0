import {Flags} from '@oclif/core'
import {AuditCommand} from '../../cli/base.js'

export default class KeysLog extends AuditCommand {
  static override description =
    "Print the log's signed-note verifier key (C2SP), for witnesses and `verify --log-key`; " +
    'creates the key on first use'

  static override examples = [
    '<%= config.bin %> keys log --origin log.example.com/audit',
    '<%= config.bin %> keys log --server http://127.0.0.1:8080',
  ]

  static override flags = {
    origin: Flags.string({
      description: 'the origin the log serves under (as given to serve --origin)',
      env: 'AUDIT_TRAIL_ORIGIN',
    }),
  }

  async run(): Promise<{origin: string; verifier_key: string}> {
    const {flags} = await this.parse(KeysLog)
    if (this.given('origin')) this.refuseWithServer(flags, 'origin', 'the server signs under its own --origin')
    const key = await this.withClient(flags, (client) => client.logKey(flags.origin))
    if (!this.jsonEnabled()) this.log(key.verifier_key)
    return key
  }
}
