import {Command} from '@oclif/core'
import {generateKey} from '../../core/auth/keys.js'

export default class KeysGenerate extends Command {
  static override description = 'Print a new random API key (32 random bytes, base64url) for a --api-keys file'

  static override enableJsonFlag = true

  async run(): Promise<{key: string}> {
    const key = generateKey()
    if (!this.jsonEnabled()) this.log(key)
    return {key}
  }
}
