import {once} from 'node:events'
import {createWriteStream} from 'node:fs'
import {rename, rm} from 'node:fs/promises'
import {finished} from 'node:stream/promises'
import {Flags} from '@oclif/core'
import {AuditCommand} from '../cli/base.js'
import {AuditError} from '../core/errors.js'
import {ExportService} from '../services/export.js'
import {filterFlags, filterParams} from './events/list.js'

export default class Export extends AuditCommand {
  static override description =
    'Write a verifiable evidence package (.atrail.json) with events, chains, inclusion proofs and the latest timestamp'

  static override examples = [
    '<%= config.bin %> export -o evidence.atrail.json',
    '<%= config.bin %> export --agent billing-bot --since 2026-11-01T00:00:00Z',
    '<%= config.bin %> export --redact input,output -o for-auditor.atrail.json',
  ]

  static override flags = {
    ...filterFlags,
    receipts: Flags.boolean({
      description: 'add a COSE Receipt (RFC 9942) per event, signed with the log key (docs/verification.md)',
    }),
    output: Flags.string({
      char: 'o',
      description: 'file to write (default: audit-trail-<UTC stamp>.atrail.json; - for stdout)',
    }),
    redact: Flags.string({
      description: 'payload members to leave out of every event, e.g. input,output (the package still verifies)',
    }),
  }

  async run() {
    const {flags} = await this.parse(Export)
    const file = flags.output ?? ExportService.fileName()
    const params = {
      ...filterParams(flags),
      ...(flags.receipts ? {receipts: 'true'} : {}),
      ...(flags.redact === undefined ? {} : {redact: flags.redact}),
    }
    if (file === '-') {
      await this.withClient(flags, (client) => client.exportPackage(params, process.stdout))
      return {file: '-'}
    }
    // Write beside the target and rename at the end, so a failed export leaves no half package.
    const partial = `${file}.partial`
    const out = createWriteStream(partial)
    try {
      // A path that cannot be opened (no such directory, no permission) is an input error, not a crash.
      await once(out, 'open')
    } catch (error) {
      throw new AuditError(
        'validation_error',
        `cannot write ${file}: ` +
          `${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such directory' : (error as Error).message}; ` +
          `give -o a file in a directory you may write, or - for stdout`,
      )
    }
    // A later write error (a full disk) is reported by `finished` below, not as an unhandled event.
    out.on('error', () => {})
    try {
      await this.withClient(flags, (client) => client.exportPackage(params, out))
      out.end()
      await finished(out)
      await rename(partial, file)
    } catch (error) {
      out.destroy()
      await rm(partial, {force: true})
      throw error
    }
    if (!this.jsonEnabled()) this.log(`wrote ${file}`)
    return {file}
  }
}
