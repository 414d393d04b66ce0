import {Args, Flags} from '@oclif/core'
import {EXIT_USAGE, JsonCommand} from '../../cli/base.js'
import {writePrivateJwk} from '../../cli/jwk-file.js'
import {AuditError} from '../../core/errors.js'
import {generateSigningJwk, publicJwkOf} from '../../core/crypto.js'
import {jwkThumbprint, type SigningJwk} from '../../core/jws/jwk.js'

export default class AgentKeysGenerate extends JsonCommand {
  static override description =
    "Create an agent's signing key: writes the private JWK to FILE (mode 0600) and prints its kid and public JWK"

  static override examples = [
    '<%= config.bin %> agent-keys generate billing-bot.jwk',
    '<%= config.bin %> agent-keys add billing-bot billing-bot.jwk',
  ]

  static override args = {
    file: Args.string({description: 'file to write the private JWK to (must not exist)', required: true}),
  }

  static override flags = {
    curve: Flags.string({
      description: 'Ed25519 (JWS alg EdDSA) or P-256 (ES256)',
      options: ['Ed25519', 'P-256'],
      default: 'Ed25519',
    }),
  }

  async run(): Promise<{kid: string; file: string; public_jwk: SigningJwk}> {
    const {args, flags} = await this.parse(AgentKeysGenerate)
    const key = generateSigningJwk(flags.curve as 'Ed25519' | 'P-256')
    try {
      await writePrivateJwk(args.file, key)
    } catch (error) {
      if (!(error instanceof AuditError)) throw error
      process.stderr.write(`Error: ${error.message}\n`)
      return this.exit(EXIT_USAGE)
    }
    const publicJwk = publicJwkOf(key)
    const kid = jwkThumbprint(publicJwk)
    if (!this.jsonEnabled()) {
      this.log(`wrote the private key to ${args.file} (keep it with the agent; only its owner can read it)`)
      this.log(`kid: ${kid}`)
      this.log(`public JWK: ${JSON.stringify(publicJwk)}`)
      this.log(`register it: ${this.config.bin} agent-keys add <agent_id> ${args.file}`)
    }
    return {kid, file: args.file, public_jwk: publicJwk}
  }
}
