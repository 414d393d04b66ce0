import {readFile} from 'node:fs/promises'
import {Flags} from '@oclif/core'
import {AuditCommand, EXIT_FAILED, EXIT_USAGE} from '../cli/base.js'
import {verifyPackage, type PackageVerification} from '../core/evidence/verify.js'
import type {EvidencePackage} from '../core/evidence/package.js'
import {InputError} from '../cli/input-error.js'
import {readPackageFile} from '../cli/package-file.js'
import {readTsaCa} from '../cli/pem.js'
import {chainReport, disclosureReport, packageReport, receiptReport} from '../cli/verify-report.js'
import {checkDisclosure, parseDisclosures, type Disclosure, type DisclosureVerdict} from '../core/erasure/index.js'
import {AuditError} from '../core/errors.js'
import type {CheckpointKeys} from '../core/evidence/check-checkpoint.js'
import {cosignatureVerifier} from '../core/checkpoint/index.js'
import {ed25519NoteVerifier, strictBase64} from '../core/note/index.js'
import {verifyEventReceipt, type ReceiptVerification} from '../core/evidence/event-receipt.js'
import {CoseError, decodeCbor} from '../core/cose/index.js'
import {withPackageHashing, type PackageHashing} from '../threads/package-hashes.js'

export default class Verify extends AuditCommand {
  static override notFound = '`audit-trail agents` lists the agents'

  static override description =
    'Verify the hash chains of the store, an evidence package offline, or an event and its COSE Receipt offline'

  static override examples = [
    '<%= config.bin %> verify',
    '<%= config.bin %> verify --agent billing-bot',
    '<%= config.bin %> verify --package evidence.atrail.json --tsa-ca ca.pem',
    '<%= config.bin %> verify --receipt event.cose --event event.json --log-key "$(cat log.vkey)"',
    '<%= config.bin %> verify --package redacted.atrail.json --disclosure input-of-event.json',
  ]

  // The three forms, one a line: oclif's generated line cannot show flags that exclude or need each other.
  static override usage = [
    'verify [--agent ID] [--data-dir DIR | --database-url URL | --server URL [--api-key KEY]] [--json]',
    'verify --package FILE [--tsa-ca FILE] [--disclosure FILE] [--log-key VKEY [--witness-key VKEY...] ' +
      '[--min-witnesses N]] [--json]',
    'verify --receipt FILE --event FILE --log-key VKEY [--json]',
  ]

  static override flags = {
    agent: Flags.string({description: 'verify only this agent'}),
    package: Flags.string({
      description: 'verify this .atrail.json evidence package offline (no store, no server)',
      exclusive: ['agent'],
    }),
    'tsa-ca': Flags.string({
      description: 'trust anchor(s) for the package timestamp, PEM; default: the certificates inside the package',
      dependsOn: ['package'],
    }),
    receipt: Flags.string({
      description: 'verify this COSE Receipt (RFC 9942) of one event offline (with --event and --log-key)',
      exclusive: ['agent', 'package'],
    }),
    event: Flags.string({
      description: 'the event the --receipt is for, as JSON (what `events get --json` prints)',
      dependsOn: ['receipt'],
    }),
    'log-key': Flags.string({
      description:
        "the log's signed-note verifier key, to check the package's checkpoint and receipts or the --receipt",
    }),
    'witness-key': Flags.string({
      description: 'a witness cosignature verifier key (repeatable)',
      multiple: true,
      dependsOn: ['log-key'],
    }),
    disclosure: Flags.string({
      description:
        'a disclosure file ({"event_id", "member", "value", "salt"}, or an array of them): check each against ' +
        "the package's commitment",
      dependsOn: ['package'],
    }),
    'min-witnesses': Flags.integer({
      description: 'how many of the --witness-key witnesses must have cosigned the checkpoint',
      min: 0,
      dependsOn: ['log-key'],
    }),
  }

  async run() {
    const {flags} = await this.parse(Verify)
    const keys = {logKey: flags['log-key'], witnessKeys: flags['witness-key'], minWitnesses: flags['min-witnesses']}
    if (flags.receipt !== undefined) return this.verifyReceiptFile(flags.receipt, flags.event, flags['log-key'])
    if (flags['log-key'] !== undefined && flags.package === undefined)
      throw new AuditError('validation_error', '--log-key goes with --package or --receipt')
    const result =
      flags.package === undefined
        ? await this.withClient(flags, (client) => client.verify(flags.agent))
        : await this.verifyPackageFile(flags.package, flags['tsa-ca'], keys, flags.disclosure)
    if (!this.jsonEnabled()) {
      for (const line of 'merkle_root' in result ? packageReport(result) : chainReport(result)) this.log(line)
      if ('disclosures' in result) for (const line of disclosureReport(result.disclosures!)) this.log(line)
    }
    if (!result.valid) process.exitCode = EXIT_FAILED
    return result
  }

  private async verifyReceiptFile(
    receiptFile: string,
    eventFile: string | undefined,
    logKey: string | undefined,
  ): Promise<ReceiptVerification> {
    if (this.given('server'))
      throw new AuditError('validation_error', '--receipt cannot be used with --server: a receipt is verified offline')
    if (eventFile === undefined || logKey === undefined)
      throw new AuditError('validation_error', '--receipt needs --event FILE and --log-key VKEY')
    try {
      ed25519NoteVerifier(logKey)
    } catch (error) {
      throw new AuditError('validation_error', `cannot use the given key: ${(error as Error).message}`)
    }
    const receipt = receiptBytes(await readInput(receiptFile, 'receipt'))
    // Not CBOR at all is an unparsable file (exit 2); CBOR that is no valid receipt fails the check (1).
    try {
      decodeCbor(receipt)
    } catch (error) {
      if (error instanceof CoseError) throw new AuditError('validation_error', `${receiptFile}: ${error.message}`)
      throw error
    }
    const eventText = (await readInput(eventFile, 'event')).toString('utf8')
    let event: unknown
    try {
      event = JSON.parse(eventText)
    } catch (error) {
      throw new AuditError('validation_error', `${eventFile} is not JSON: ${(error as Error).message}`)
    }
    let result: ReceiptVerification
    try {
      result = verifyEventReceipt(event, receipt, logKey)
    } catch (error) {
      if (error instanceof TypeError) throw new AuditError('validation_error', `${eventFile}: ${error.message}`)
      throw error
    }
    if (!this.jsonEnabled()) for (const line of receiptReport(result)) this.log(line)
    if (!result.valid) process.exitCode = EXIT_FAILED
    return result
  }

  private async verifyPackageFile(
    file: string,
    caFile: string | undefined,
    keys: CheckpointKeys,
    disclosureFile?: string,
  ): Promise<PackageVerification & {disclosures?: DisclosureVerdict[]}> {
    if (this.given('server')) {
      throw new AuditError('validation_error', '--package cannot be used with --server: a package is verified offline')
    }
    try {
      if (keys.logKey !== undefined) ed25519NoteVerifier(keys.logKey)
    } catch (error) {
      const fix = 'give the key `audit-trail keys log` prints (<origin>+<key id>+<base64>)'
      throw new AuditError('validation_error', `cannot use --log-key: ${(error as Error).message}; ${fix}`)
    }
    for (const key of keys.witnessKeys ?? []) {
      try {
        cosignatureVerifier(key)
      } catch (error) {
        const fix = 'give the key `audit-trail witness serve` prints (witness key: <name>+<key id>+<base64>)'
        throw new AuditError('validation_error', `cannot use --witness-key ${key}: ${(error as Error).message}; ${fix}`)
      }
    }
    const disclosures = disclosureFile === undefined ? undefined : await readDisclosures(disclosureFile)
    const {pkg, verdict} = await withPackageHashing((hashes) => this.readAndVerify(file, caFile, keys, hashes))
    if (disclosures === undefined || pkg === undefined) return verdict
    // A disclosure is checked against a package that verifies, or not at all.
    const checked = verdict.valid ? disclosures.map((d) => checkDisclosure(pkg.events, d)) : []
    return {...verdict, valid: verdict.valid && checked.every((d) => d.valid), disclosures: checked}
  }

  /** The package of `file` and its verdict; no package when the file is JSON but no package anyone can check. */
  private async readAndVerify(
    file: string,
    caFile: string | undefined,
    keys: CheckpointKeys,
    hashes: PackageHashing,
  ): Promise<{pkg?: EvidencePackage; verdict: PackageVerification}> {
    let pkg: EvidencePackage | InputError
    try {
      pkg = await readPackageFile(file, hashes)
    } catch (error) {
      if (!(error instanceof InputError && error.code === 'invalid_package')) {
        process.stderr.write(`Error: ${(error as Error).message}\n`)
        return this.exit(EXIT_USAGE)
      }
      pkg = error
    }
    const anchors = caFile === undefined ? undefined : await readTsaCa(caFile)
    if (pkg instanceof InputError) return {verdict: invalidPackage(pkg.message)}
    return {pkg, verdict: await verifyPackage(pkg, {trustAnchorsPem: anchors, hashes, ...keys})}
  }
}

/** The disclosures of a file; one that cannot be read or is no disclosure is an input error (exit 2). */
async function readDisclosures(file: string): Promise<Disclosure[]> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new AuditError('validation_error', `cannot read the disclosure ${file}: ${(error as Error).message}`)
  }
  try {
    return parseDisclosures(JSON.parse(text))
  } catch (error) {
    const reason = error instanceof AuditError ? error.message : `not JSON: ${(error as Error).message}`
    throw new AuditError('validation_error', `the disclosure ${file} is not a disclosure: ${reason}`)
  }
}

/** The verdict on a file that is JSON but no package anyone can check: a failed format check. */
function invalidPackage(message: string): PackageVerification {
  const failure = {check: 'format' as const, message}
  const empty = {filters: {}, events_checked: 0, agents: 0, tree_size: 0, merkle_root: ''}
  return {valid: false, ...empty, timestamp: null, checkpoint: null, receipts: null, failure}
}

async function readInput(file: string, what: string): Promise<Buffer> {
  try {
    return await readFile(file)
  } catch (error) {
    throw new AuditError('validation_error', `cannot read the ${what} file ${file}: ${(error as Error).message}`)
  }
}

/** A receipt file holds the COSE_Sign1 bytes, or their base64 as a package's `receipts` member does. */
function receiptBytes(content: Buffer): Buffer {
  // A tagged COSE_Sign1 starts with 0xd2, an untagged one with 0x84: neither is base64 text.
  if (content[0] === 0xd2 || content[0] === 0x84) return content
  return strictBase64(content.toString('latin1').trim()) ?? content
}
