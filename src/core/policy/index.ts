/** The policy engine (docs/api.md, Policy): parse a policy document, check it over events. */
export {checkPolicies, type PolicyReport} from './check.js'
export type {AgentVerification, LatestTimestamp, PolicyContext} from './context.js'
export {
  parsePolicyDocument,
  parsePolicyScope,
  parsePolicyText,
  type PolicyDocument,
  type PolicyScope,
} from './document.js'
export {formatDuration, parseDuration} from './duration.js'
export {compileGlob, compileMatcher, describeMatcher, type Matcher} from './matcher.js'
export {holds, RULE_TYPES, type Rule, type RuleType} from './rule.js'
export {readsApprovals, type HeldCallReport} from './approval-checks.js'
export {MAX_LISTED_VIOLATIONS, type RuleResult, type Violation} from './violation.js'
