import {JsonCommand} from '../../cli/base.js'
import {generateKey} from '../../core/auth/keys.js'

export default class KeysGenerate extends JsonCommand {
  static override description = 'Print a new random API key (32 random bytes, base64url) for a --api-keys file'

  async run(): Promise<{key: string}> {
    await this.parse(KeysGenerate)
    const key = generateKey()
    if (!this.jsonEnabled()) this.log(key)
    return {key}
  }
}
