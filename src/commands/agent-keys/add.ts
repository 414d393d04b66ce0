import {Args} from '@oclif/core'
import {AuditCommand} from '../../cli/base.js'
import {readPublicJwk} from '../../cli/jwk-file.js'
import {jwkThumbprint} from '../../core/jws/jwk.js'

export default class AgentKeysAdd extends AuditCommand {
  static override description =
    "Register an agent's public key (from a JWK file; of a private one only the public part is sent)"

  static override examples = [
    '<%= config.bin %> agent-keys add billing-bot billing-bot.jwk --server http://127.0.0.1:8080',
  ]

  static override args = {
    agent: Args.string({description: 'agent id', required: true}),
    file: Args.string({description: 'JWK file (Ed25519 or P-256)', required: true}),
  }

  async run() {
    const {args, flags} = await this.parse(AgentKeysAdd)
    const jwk = await readPublicJwk(args.file)
    const kid = jwkThumbprint(jwk)
    const change = await this.withClient(flags, (client) => client.registerAgentKey(args.agent, kid, jwk), {
      create: true,
    })
    if (!this.jsonEnabled()) {
      const what = change.status === 201 ? 'registered' : 'was registered already'
      this.log(`key ${kid} of agent ${args.agent} ${what} at index ${change.key.registered_index}`)
    }
    return change
  }
}
