import {readFile} from 'node:fs/promises'
import {Flags} from '@oclif/core'
import {AuditCommand, EXIT_FAILED, EXIT_USAGE} from '../../cli/base.js'
import {HttpClient} from '../../cli/client.js'
import {colour, problemText} from '../../cli/output.js'
import {readPackageFile} from '../../cli/package-file.js'
import {formatPolicyReport} from '../../cli/policy-report.js'
import {AuditError} from '../../core/errors.js'
import {isTaggedPackage, PACKAGE_FORMAT, PACKAGE_VERSION, type EvidencePackage} from '../../core/evidence/package.js'
import {verifyPackage} from '../../core/evidence/verify.js'
import {checkPolicies, parsePolicyDocument, parsePolicyText, type PolicyDocument, type PolicyReport} from '../../core/policy/index.js'
import {openAudit} from '../../services/audit.js'

export default class PolicyCheck extends AuditCommand {
  static override description = 'Check a policy (JSON or YAML) against the audit trail; exit 1 when a rule is violated'

  static override examples = [
    '<%= config.bin %> policy check --policy examples/policy.yaml',
    '<%= config.bin %> policy check --policy policy.yaml --server http://127.0.0.1:8080 --format junit > policy-results.xml',
    '<%= config.bin %> policy check --policy policy.yaml --package evidence.atrail.json',
  ]

  static override flags = {
    policy: Flags.string({description: 'policy file, JSON or YAML: {"policies": [...], "scope": {...}}', required: true}),
    agent: Flags.string({description: 'limit the scope to this agent'}),
    since: Flags.string({description: 'limit the scope to events at or after this ISO 8601 time'}),
    until: Flags.string({description: 'limit the scope to events before this ISO 8601 time'}),
    package: Flags.string({description: 'check an exported .atrail.json evidence package offline'}),
    format: Flags.string({description: 'output format', options: ['text', 'json', 'junit'], default: 'text'}),
  }

  async run(): Promise<PolicyReport> {
    const {flags} = await this.parse(PolicyCheck)
    if (flags.package !== undefined && this.given('server')) throw new AuditError('validation_error', '--package cannot be used with --server: a package is checked offline')
    // --json prints the JSON report; another --format beside it would be dropped unsaid.
    if (this.jsonEnabled() && this.given('format') && flags.format !== 'json') throw new AuditError('validation_error', `--format ${flags.format} cannot be used with --json, which prints the JSON report`)
    let doc: PolicyDocument
    try {
      doc = parsePolicyText(await readFile(flags.policy, 'utf8'))
    } catch (error) {
      process.stderr.write(`Error: invalid policy file ${flags.policy}: ${problemText(error)}\n`)
      return this.exit(EXIT_USAGE)
    }
    const scope = {...doc.scope}
    if (flags.agent !== undefined) scope.agent_id = flags.agent
    if (flags.since !== undefined) scope.since = flags.since
    if (flags.until !== undefined) scope.until = flags.until
    const request = {policies: doc.policies, scope}

    let report: PolicyReport
    const server = this.serverOf(flags)
    if (flags.package) report = await this.checkPackage(flags.package, request)
    else if (server) report = (await new HttpClient(server, flags['api-key']).request<PolicyReport>('POST', '/v1/policy/check', {body: request})).body
    else {
      const services = await openAudit({dataDir: flags['data-dir'], databaseUrl: flags['database-url'], store: {create: false}})
      try {
        report = await services.policy.checkRequest(request)
      } finally {
        await services.close()
      }
    }
    if (!this.jsonEnabled()) this.log(formatPolicyReport(report, flags.format as 'text' | 'json' | 'junit', {color: colour.level > 0}))
    if (!report.passed) process.exitCode = EXIT_FAILED
    return report
  }

  /** Checks the package's events; chain status and the timestamp come from verifying the package. */
  private async checkPackage(file: string, request: {policies: unknown; scope: unknown}): Promise<PolicyReport> {
    let pkg: EvidencePackage
    try {
      pkg = await readPackageFile(file)
    } catch (error) {
      process.stderr.write(`Error: ${(error as Error).message}\n`)
      return this.exit(EXIT_USAGE)
    }
    // Without the package's tag and its events there is nothing to check the policy against: an
    // invalid input file (exit 2), where `verify --package` reports it as a failed check.
    if (!isTaggedPackage(pkg)) {
      process.stderr.write(`Error: ${file} is not an evidence package (an object with "format": "${PACKAGE_FORMAT}", "version": ${PACKAGE_VERSION} and "events")\n`)
      return this.exit(EXIT_USAGE)
    }
    const doc = parsePolicyDocument(request)
    const verification = await verifyPackage(pkg)
    async function* events() {
      yield pkg.events
    }
    return checkPolicies(doc, events(), {
      now: new Date(),
      async verifyAgents(agentIds) {
        const failure = verification.failure
        return agentIds.map((agent_id) => failure && (failure.agent_id === undefined || failure.agent_id === agent_id)
          ? {agent_id, valid: false, first_invalid_sequence: failure.sequence, first_invalid_event_id: failure.event_id, reason: failure.reason ?? failure.check}
          : {agent_id, valid: true})
      },
      async latestTimestamp() {
        if (!pkg.timestamp) return null
        return {timestamp: pkg.timestamp.timestamp, valid: verification.valid && verification.timestamp !== null, error: verification.failure?.message}
      },
    })
  }
}
