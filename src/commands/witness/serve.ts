import {Flags} from '@oclif/core'
import {EXIT_USAGE, OneSentenceCommand} from '../../cli/base.js'
import {problemText} from '../../cli/output.js'
import {ed25519NoteVerifier} from '../../core/note/index.js'
import {listen} from '../../server/server.js'
import {createWitnessApp} from '../../server/witness-app.js'
import {Witness} from '../../services/witness.js'

export default class WitnessServe extends OneSentenceCommand {
  static override description = 'Run a witness (C2SP tlog-witness) that cosigns the checkpoints of the logs it is given'

  static override examples = [
    '<%= config.bin %> witness serve --name witness.example.org/w1 ' +
      '--log log.example.com/audit=log.example.com/audit+1a2b3c4d+AXk...',
  ]

  static override flags = {
    log: Flags.string({
      description: 'a log to witness: ORIGIN=VERIFIER_KEY (repeatable; the key from `audit-trail keys log`)',
      multiple: true,
      required: true,
    }),
    name: Flags.string({
      description: 'the witness key name, a URL without scheme that identifies this witness',
      default: 'audit-trail.invalid/witness',
    }),
    dir: Flags.string({
      description: 'directory of the witness key and its state file',
      default: './audit-trail-witness',
    }),
    host: Flags.string({description: 'address to listen on', default: '127.0.0.1'}),
    port: Flags.integer({description: 'port to listen on (0: any free port)', default: 8081, min: 0, max: 65535}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(WitnessServe)
    let witness
    try {
      witness = await Witness.open({dir: flags.dir, name: flags.name, logs: parseLogs(flags.log)})
    } catch (error) {
      process.stderr.write(`Error: cannot start the witness: ${problemText(error)}\n`)
      return this.exit(EXIT_USAGE)
    }
    let running
    try {
      running = await listen(createWitnessApp(witness), flags.host, flags.port)
    } catch (error) {
      process.stderr.write(`Error: ${problemText(error)}\n`)
      return this.exit(EXIT_USAGE)
    }
    this.log(`audit-trail witness listening on ${running.url} (state in ${flags.dir})`)
    this.log(`witness key: ${witness.verifierKey}`)
    const stop = async () => {
      await running.close()
      process.exit(0)
    }
    process.on('SIGINT', () => void stop())
    process.on('SIGTERM', () => void stop())
    await new Promise(() => {})
  }
}

const LOG_KEY_HINT = 'give --log ORIGIN=KEY with the key `audit-trail keys log` prints for the log'

/** `ORIGIN=VKEY` pairs; an origin may be given several keys. The key's name must be the origin. */
function parseLogs(specs: string[]): Map<string, string[]> {
  const logs = new Map<string, string[]>()
  for (const spec of specs) {
    const split = spec.indexOf('=')
    if (split <= 0) throw new Error(`--log ${spec} is not ORIGIN=VERIFIER_KEY; ${LOG_KEY_HINT}`)
    const origin = spec.slice(0, split)
    const key = spec.slice(split + 1)
    let verifier
    try {
      verifier = ed25519NoteVerifier(key)
    } catch (error) {
      throw new Error(`--log ${origin}: ${(error as Error).message}; ${LOG_KEY_HINT}`, {cause: error})
    }
    if (verifier.name !== origin)
      throw new Error(
        `--log ${origin}: the key is named ${verifier.name}, and a log signs its checkpoints under its origin; ` +
          `give --log ${verifier.name}=KEY`,
      )
    logs.set(origin, [...(logs.get(origin) ?? []), key])
  }
  return logs
}
