import {readFile} from 'node:fs/promises'
import {Flags} from '@oclif/core'
import {AuditCommand, EXIT_FAILED, oneSentence} from '../../cli/base.js'
import {colour, problemText} from '../../cli/output.js'
import {cannotRead} from '../../cli/next-step.js'
import {readPackageFile} from '../../cli/package-file.js'
import {formatJunitError, formatPolicyReport} from '../../cli/policy-report.js'
import {AuditError} from '../../core/errors.js'
import {isTaggedPackage, PACKAGE_FORMAT, type EvidencePackage} from '../../core/evidence/package.js'
import {parsePolicyText, type PolicyDocument, type PolicyReport} from '../../core/policy/index.js'
import {checkPackagePolicy} from '../../services/policy.js'
import {withPackageHashing, type PackageHashing} from '../../threads/package-hashes.js'

export default class PolicyCheck extends AuditCommand {
  static override description = 'Check a policy (JSON or YAML) against the audit trail; exit 1 when a rule is violated'

  static override examples = [
    '<%= config.bin %> policy check --policy examples/policy.yaml',
    '<%= config.bin %> policy check --policy policy.yaml --server http://127.0.0.1:8080 --format junit > ' +
      'policy-results.xml',
    '<%= config.bin %> policy check --policy policy.yaml --package evidence.atrail.json',
  ]

  static override flags = {
    policy: Flags.string({
      description: 'policy file, JSON or YAML: {"policies": [...], "scope": {...}}',
      required: true,
    }),
    agent: Flags.string({description: 'limit the scope to this agent'}),
    since: Flags.string({description: 'limit the scope to events at or after this ISO 8601 time'}),
    until: Flags.string({description: 'limit the scope to events before this ISO 8601 time'}),
    package: Flags.string({description: 'check an exported .atrail.json evidence package offline'}),
    format: Flags.string({description: 'output format', options: ['text', 'json', 'junit'], default: 'text'}),
  }

  async run(): Promise<PolicyReport> {
    const {flags} = await this.parse(PolicyCheck)
    if (flags.package !== undefined && this.given('server'))
      throw new AuditError('validation_error', '--package cannot be used with --server: a package is checked offline')
    // --json prints the JSON report; another --format beside it would be dropped unsaid.
    if (this.jsonEnabled() && this.given('format') && flags.format !== 'json')
      throw new AuditError(
        'validation_error',
        `--format ${flags.format} cannot be used with --json, which prints the JSON report`,
      )
    const doc = await readPolicyFile(flags.policy)
    const scope = {...doc.scope}
    if (flags.agent !== undefined) scope.agent_id = flags.agent
    if (flags.since !== undefined) scope.since = flags.since
    if (flags.until !== undefined) scope.until = flags.until
    const request = {policies: doc.policies, scope}
    const report =
      flags.package === undefined
        ? await this.withClient(flags, (client) => client.checkPolicy(request))
        : await checkPackageFile(request, flags.package)
    if (!this.jsonEnabled())
      this.log(formatPolicyReport(report, flags.format as 'text' | 'json' | 'junit', {color: colour.level > 0}))
    if (!report.passed) process.exitCode = EXIT_FAILED
    return report
  }

  /** With --format junit, a check that could not run still leaves a JUnit document naming why. */
  protected override async catch(
    error: Error & {code?: string; exitCode?: number; oclif?: {exit?: number}},
  ): Promise<unknown> {
    if (error.code !== 'EEXIT' && asksForJunit(this.argv)) {
      const reason = error.oclif?.exit === undefined ? error.message : oneSentence(error.message)
      process.stdout.write(`${formatJunitError(reason)}\n`)
    }
    return super.catch(error)
  }
}

/**
 * Whether the command line asks for `--format junit` (read raw: a parse error leaves no flags).
 * Not beside --json, which refuses any other format and keeps stdout for JSON.
 */
function asksForJunit(argv: readonly string[]): boolean {
  if (argv.includes('--json')) return false
  return argv.some((arg, i) => arg === '--format=junit' || (arg === '--format' && argv[i + 1] === 'junit'))
}

async function readPolicyFile(file: string): Promise<PolicyDocument> {
  let text
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new AuditError('validation_error', cannotRead(file, error, POLICY_FILE))
  }
  try {
    return parsePolicyText(text)
  } catch (error) {
    throw new AuditError('validation_error', `invalid policy file ${file}: ${problemText(error)}`)
  }
}

const POLICY_FILE = 'a policy file, JSON or YAML (examples/policy.yaml shows one)'

/** The policies over the package in `file`, its chain checked with a hashing thread (verify --package's). */
async function checkPackageFile(request: unknown, file: string): Promise<PolicyReport> {
  return withPackageHashing(async (hashes) => checkPackagePolicy(request, await readPackage(file, hashes), hashes))
}

/**
 * The package to check. Without the package's tag and its events there is nothing to check the
 * policy against: an invalid input file (exit 2), where `verify --package` reports it as a failed check.
 */
async function readPackage(file: string, hashes: PackageHashing): Promise<EvidencePackage> {
  let pkg: EvidencePackage
  try {
    pkg = await readPackageFile(file, hashes)
  } catch (error) {
    throw new AuditError('validation_error', (error as Error).message)
  }
  if (!isTaggedPackage(pkg)) {
    const tag = `"format": "${PACKAGE_FORMAT}", "version": 1 or 2 and "events"`
    throw new AuditError('validation_error', `${file} is not an evidence package (an object with ${tag})`)
  }
  return pkg
}
