/**
 * The policy rule types of docs/api.md (Policy) and their validation. A validated rule
 * keeps the author's own shape (durations stay `1h`), so it can be echoed back unchanged.
 */
import {DURATION_HINT, parseDuration} from './duration.js'
import {parseMatcher, type Matcher} from './matcher.js'
import {joinPath, reportUnknownKeys, type Report} from './problems.js'

interface RuleBase {
  name: string
  description?: string
}

export interface ChainIntegrityRule extends RuleBase {
  type: 'chain_integrity'
}
export interface RequiredLabelsRule extends RuleBase {
  type: 'required_labels'
  labels: string[]
  match?: Matcher
}
/**
 * What `mcp-proxy` does with a call the rule flags (docs/oversight.md): `refuse` it (the default),
 * or `hold` it until a person decides; `policy check` then wants a granted approval before it.
 */
export type RuleAction = 'refuse' | 'hold'
export const RULE_ACTIONS: readonly RuleAction[] = ['refuse', 'hold']

export interface ForbiddenActionRule extends RuleBase {
  type: 'forbidden_action'
  match: Matcher
  action?: RuleAction
}
export interface AllowedActionsRule extends RuleBase {
  type: 'allowed_actions'
  match: Matcher[]
  /** Glob: the agents the allow-list applies to; every agent when absent. */
  agent_id?: string
  action?: RuleAction
}
/** Every matching event that ran has a granted approval before it, by `parent_id` (docs/oversight.md). */
export interface RequireApprovalRule extends RuleBase {
  type: 'require_approval'
  match: Matcher
}
export interface RequirePrecedingRule extends RuleBase {
  type: 'require_preceding'
  match: Matcher
  preceded_by: Matcher
  within?: string
}
export interface MaxFailureRateRule extends RuleBase {
  type: 'max_failure_rate'
  max: number
  min_events?: number
  statuses?: string[]
}
export interface MaxRateRule extends RuleBase {
  type: 'max_rate'
  match: Matcher
  max: number
  per: string
}
export interface TimestampFreshnessRule extends RuleBase {
  type: 'timestamp_freshness'
  max_age: string
}
export interface SignedEventsRule extends RuleBase {
  type: 'signed_events'
  /** Glob: the agents whose every event must be signed; every agent when absent. */
  agent_id?: string
}

export type Rule =
  | ChainIntegrityRule
  | RequiredLabelsRule
  | ForbiddenActionRule
  | AllowedActionsRule
  | RequirePrecedingRule
  | MaxFailureRateRule
  | MaxRateRule
  | TimestampFreshnessRule
  | SignedEventsRule
  | RequireApprovalRule

export type RuleType = Rule['type']

/** The parameters each rule type accepts besides `name`, `type` and `description`. */
const PARAMETERS: Readonly<Record<RuleType, readonly string[]>> = {
  chain_integrity: [],
  required_labels: ['labels', 'match'],
  forbidden_action: ['match', 'action'],
  allowed_actions: ['match', 'agent_id', 'action'],
  require_preceding: ['match', 'preceded_by', 'within'],
  max_failure_rate: ['max', 'min_events', 'statuses'],
  max_rate: ['match', 'max', 'per'],
  timestamp_freshness: ['max_age'],
  signed_events: ['agent_id'],
  require_approval: ['match'],
}

export const RULE_TYPES = Object.keys(PARAMETERS) as RuleType[]

const LABEL_KEY = /^[A-Za-z0-9_.:-]{1,64}$/
const STATUS = /^[a-z][a-z0-9_]*$/

function isRuleType(value: unknown): value is RuleType {
  return typeof value === 'string' && Object.hasOwn(PARAMETERS, value)
}

/**
 * Validates one rule (its `name` already checked by the caller). Reports every problem under
 * `path` (`policies[2]`) and returns undefined when there was any.
 */
export function parseRule(raw: Record<string, unknown>, path: string, report: Report): Rule | undefined {
  let failed = false
  const note: Report = (field, message) => {
    failed = true
    report(field, message)
  }
  const at = (key: string) => joinPath(path, key)
  if (!isRuleType(raw.type)) {
    note(at('type'), raw.type === undefined ? 'is required' : `must be one of ${RULE_TYPES.join(', ')}`)
    return undefined
  }
  const type = raw.type
  reportUnknownKeys(raw, ['name', 'type', 'description', ...PARAMETERS[type]], path, note)
  if (raw.description !== undefined && typeof raw.description !== 'string') note(at('description'), 'must be a string')
  const rule = {name: raw.name, type, ...(raw.description === undefined ? {} : {description: raw.description})}
  const params = readParameters(type, raw, at, note)
  return failed ? undefined : ({...rule, ...params} as Rule)
}

function readParameters(type: RuleType, raw: Record<string, unknown>, at: (key: string) => string, note: Report) {
  const matcher = (key: string) => parseMatcher(raw[key], at(key), note)
  const optionalMatcher = (key: string) => (raw[key] === undefined ? {} : {[key]: matcher(key)})
  const duration = (key: string) => readDuration(raw[key], at(key), note)
  switch (type) {
    case 'chain_integrity':
      return {}
    case 'required_labels':
      return {
        labels: readStrings(raw.labels, at('labels'), LABEL_KEY, 'a label key', note),
        ...optionalMatcher('match'),
      }
    case 'forbidden_action':
      return {match: matcher('match'), ...readAction(raw.action, at('action'), note)}
    case 'allowed_actions':
      return {
        match: readMatchers(raw.match, at('match'), note),
        ...readAgentGlob(raw.agent_id, at('agent_id'), note),
        ...readAction(raw.action, at('action'), note),
      }
    case 'require_preceding':
      return {
        match: matcher('match'),
        preceded_by: matcher('preceded_by'),
        ...(raw.within === undefined ? {} : {within: duration('within')}),
      }
    case 'max_failure_rate':
      return {
        max: readFraction(raw.max, at('max'), note),
        ...(raw.min_events === undefined ? {} : {min_events: readCount(raw.min_events, at('min_events'), 1, note)}),
        ...(raw.statuses === undefined
          ? {}
          : {statuses: readStrings(raw.statuses, at('statuses'), STATUS, 'an action_status', note)}),
      }
    case 'max_rate':
      return {match: matcher('match'), max: readCount(raw.max, at('max'), 0, note), per: duration('per')}
    case 'timestamp_freshness':
      return {max_age: duration('max_age')}
    case 'signed_events':
      return readAgentGlob(raw.agent_id, at('agent_id'), note)
    case 'require_approval':
      return {match: matcher('match')}
  }
}

function readAction(value: unknown, field: string, note: Report): {action?: RuleAction} {
  if (value === undefined) return {}
  if (!(RULE_ACTIONS as readonly unknown[]).includes(value)) note(field, `must be one of ${RULE_ACTIONS.join(', ')}`)
  return {action: value as RuleAction}
}

/** Whether the proxy holds the calls this rule flags (docs/oversight.md). */
export function holds(rule: Rule): boolean {
  return (rule.type === 'forbidden_action' || rule.type === 'allowed_actions') && rule.action === 'hold'
}

function readDuration(value: unknown, field: string, note: Report): string | undefined {
  if (value === undefined) note(field, `is required and ${DURATION_HINT}`)
  else if (typeof value !== 'string' || !isDuration(value)) note(field, DURATION_HINT)
  else return value
  return undefined
}

function isDuration(text: string): boolean {
  try {
    parseDuration(text)
    return true
  } catch {
    return false
  }
}

function readMatchers(value: unknown, field: string, note: Report): Matcher[] | undefined {
  if (!Array.isArray(value) || value.length === 0) {
    note(field, 'must be a non-empty array of matchers')
    return undefined
  }
  return value.map((item, i) => parseMatcher(item, `${field}[${i}]`, note)) as Matcher[]
}

function readAgentGlob(value: unknown, field: string, note: Report): {agent_id?: string} {
  if (value === undefined) return {}
  if (typeof value !== 'string' || value === '') note(field, 'must be a non-empty string (`*` is a wildcard)')
  return {agent_id: value as string}
}

function readStrings(value: unknown, field: string, pattern: RegExp, what: string, note: Report): string[] | undefined {
  if (!Array.isArray(value) || value.length === 0) {
    note(field, `must be a non-empty array of strings, each ${what}`)
    return undefined
  }
  value.forEach((item, i) => {
    if (typeof item !== 'string' || !pattern.test(item)) note(`${field}[${i}]`, `must be ${what}`)
  })
  return value as string[]
}

function readFraction(value: unknown, field: string, note: Report): number | undefined {
  if (typeof value === 'number' && value >= 0 && value <= 1) return value
  note(field, 'must be a number between 0 and 1')
  return undefined
}

function readCount(value: unknown, field: string, min: number, note: Report): number | undefined {
  if (Number.isSafeInteger(value) && (value as number) >= min) return value as number
  note(field, `must be a whole number of at least ${min}`)
  return undefined
}
