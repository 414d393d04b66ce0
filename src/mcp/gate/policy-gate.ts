/**
 * Policy at the tool boundary (docs/mcp.md): the `forbidden_action` and `allowed_actions` rules of
 * a policy file (docs/policy.md) decide, before a request is forwarded, on the event it would
 * become. The rules are judged by the same checkers `policy check` runs over the recorded log, so
 * a request the proxy lets through is one the log will not later show as a violation of them.
 */
import {readFile} from 'node:fs/promises'
import {AuditError} from '../../core/errors.js'
import {parsePolicyText, type PolicyDocument, type Rule} from '../../core/policy/index.js'
import type {RuleChecker} from '../../core/policy/context.js'
import {checkAllowedActions, checkForbiddenAction} from '../../core/policy/event-checks.js'
import {holds} from '../../core/policy/index.js'
import type {EventHeader} from '../../core/types.js'

/** The rule types that can be decided on one request before it happens. */
const ENFORCED_RULE_TYPES = ['forbidden_action', 'allowed_actions'] as const

export interface PolicyVerdict {
  rule: string
  type: string
  message: string
  /** The rule holds the call for a person's decision (`"action": "hold"`, docs/oversight.md). */
  hold?: boolean
}

/** The parts of an event known before the request is forwarded. */
type ProspectiveEvent = Pick<EventHeader, 'agent_id' | 'action_type' | 'action_name' | 'labels'>

export class PolicyGate {
  readonly #checkers: RuleChecker[]
  readonly #scopeAgent: string | undefined
  /** The rules of the file that are checked over the log only (`policy check`), not here. */
  readonly notEnforced: Rule[]

  constructor(document: PolicyDocument) {
    const enforced = (rule: Rule) => (ENFORCED_RULE_TYPES as readonly string[]).includes(rule.type)
    const checkers = document.policies.flatMap((rule) => {
      if (rule.type === 'forbidden_action') return [checkForbiddenAction(rule)]
      if (rule.type === 'allowed_actions') return [checkAllowedActions(rule)]
      return []
    })
    // A refusal wins over a hold whatever the order: nobody is asked about a call that cannot go.
    this.#checkers = [...checkers.filter((c) => !holds(c.rule)), ...checkers.filter((c) => holds(c.rule))]
    this.notEnforced = document.policies.filter((rule) => !enforced(rule))
    this.#scopeAgent = document.scope?.agent_id
  }

  /** Reads a policy file (JSON or YAML, docs/policy.md); a bad one is an AuditError naming it. */
  static async fromFile(file: string): Promise<PolicyGate> {
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (error) {
      throw new AuditError('validation_error', `cannot read the policy file ${file}: ${(error as Error).message}`)
    }
    return new PolicyGate(parsePolicyText(text))
  }

  /** Whether any rule holds calls (the proxy then needs a log others can decide on). */
  get holds(): boolean {
    return this.#checkers.some((checker) => holds(checker.rule))
  }

  /** The first rule the event would violate, or undefined when the request may go. */
  check(event: ProspectiveEvent): PolicyVerdict | undefined {
    if (this.#scopeAgent !== undefined && event.agent_id !== this.#scopeAgent) return undefined
    const header: EventHeader = {
      ...event,
      id: '',
      index: -1,
      sequence: 0,
      action_status: 'pending',
      timestamp: new Date().toISOString(),
    }
    for (const checker of this.#checkers) {
      const before = checker.violations.count
      checker.observe!(header)
      if (checker.violations.count === before) continue
      const {name, type} = checker.rule
      if (holds(checker.rule))
        return {
          rule: name,
          type,
          hold: true,
          message:
            `held by policy rule "${name}" (${type}): ` +
            `${event.action_type} ${event.action_name} waits for approval`,
        }
      const verdict = type === 'forbidden_action' ? 'is forbidden' : 'is not among the allowed actions'
      return {
        rule: name,
        type,
        message: `refused by policy rule "${name}" (${type}): ${event.action_type} ${event.action_name} ${verdict}`,
      }
    }
    return undefined
  }
}
