/**
 * The policy document of docs/api.md (Policy): `{"policies": [rule...], "scope":
 * {agent_id?, since?, until?}}`, the body of POST /v1/policy/check and the content of a policy file
 * (JSON or YAML). Validation collects every problem and names the rule in the message.
 */
import {parseDocument} from 'yaml'
import {AuditError} from '../errors.js'
import {parseTime} from '../query-params.js'
import {requestTextProblem} from '../request-text.js'
import {isObject, joinPath, Problems, reportUnknownKeys, type Report} from './problems.js'
import {parseRule, type Rule} from './rule.js'

export interface PolicyDocument {
  policies: Rule[]
  scope?: PolicyScope
}

/** Which events are checked: `since` inclusive, `until` exclusive, both against `timestamp`. */
export interface PolicyScope {
  agent_id?: string
  since?: string
  until?: string
}

/** Validates a parsed policy document; throws one validation_error listing every problem. */
export function parsePolicyDocument(value: unknown): PolicyDocument {
  const problems = new Problems()
  const report = problems.reporterFor('policy document')
  if (!isObject(value)) {
    report('policies', 'is required: a policy document is an object with a "policies" array')
    problems.throwIfAny()
  }
  const raw = value as Record<string, unknown>
  reportUnknownKeys(raw, ['policies', 'scope'], '', report)
  const policies = parseRules(raw.policies, problems)
  const scope =
    raw.scope === undefined ? undefined : readScope(raw.scope, 'scope', problems.reporterFor('policy scope'))
  problems.throwIfAny()
  return scope === undefined ? {policies} : {policies, scope}
}

/** Validates a scope on its own (for example one built from CLI flags `--agent --since --until`). */
export function parsePolicyScope(value: unknown): PolicyScope {
  const problems = new Problems()
  const scope = readScope(value, 'scope', problems.reporterFor('policy scope'))
  problems.throwIfAny()
  return scope
}

function parseRules(value: unknown, problems: Problems): Rule[] {
  if (!Array.isArray(value)) {
    problems.reporterFor('policy document')('policies', 'is required and must be an array of rules')
    return []
  }
  const seen = new Set<string>()
  const rules: Rule[] = []
  value.forEach((item, i) => {
    const path = `policies[${i}]`
    const name = isObject(item) && typeof item.name === 'string' && item.name !== '' ? item.name : undefined
    const report = problems.reporterFor(name === undefined ? `policy rule at ${path}` : `policy rule "${name}"`)
    if (!isObject(item)) return report(path, 'must be an object with a name and a type')
    if (name === undefined) report(joinPath(path, 'name'), 'is required and must be a non-empty string')
    else if (seen.has(name)) report(joinPath(path, 'name'), `must be unique: "${name}" is already used by another rule`)
    else seen.add(name)
    const rule = parseRule(item, path, report)
    if (rule && name !== undefined) rules.push(rule)
  })
  return rules
}

function readScope(value: unknown, path: string, report: Report): PolicyScope {
  if (!isObject(value)) {
    report(path, 'must be an object with agent_id, since or until')
    return {}
  }
  reportUnknownKeys(value, ['agent_id', 'since', 'until'], path, report)
  const scope: PolicyScope = {}
  if (value.agent_id !== undefined) {
    const problem = typeof value.agent_id === 'string' ? requestTextProblem(value.agent_id) : undefined
    if (problem !== undefined) report(joinPath(path, 'agent_id'), problem)
    else if (typeof value.agent_id === 'string' && value.agent_id !== '') scope.agent_id = value.agent_id
    else report(joinPath(path, 'agent_id'), 'must be a non-empty string')
  }
  // Read as GET /v1/events reads its since and until (a real date and time of day: Date.parse
  // alone would roll 2026-02-30 over into March); the author's text is kept, its UTC form compared.
  const utc: {since?: string; until?: string} = {}
  for (const key of ['since', 'until'] as const) {
    if (value[key] === undefined) continue
    const time = value[key]
    utc[key] = typeof time === 'string' ? parseTime(time, key, []) : undefined
    if (utc[key] !== undefined) scope[key] = time as string
    else report(joinPath(path, key), 'must be an ISO 8601 time with a timezone, for example 2026-01-31T00:00:00Z')
  }
  if (utc.since !== undefined && utc.until !== undefined && utc.since >= utc.until) {
    report(joinPath(path, 'until'), 'must be later than since (since is inclusive, until exclusive)')
  }
  return scope
}

/**
 * Parses policy file text, JSON or YAML (YAML 1.2 core schema, so `since: 2026-01-01T00:00:00Z`
 * stays a string). Text that starts with `{` or `[` is JSON (docs/policy.md): a syntax error there
 * is a JSON syntax error with its line and column where V8 gives one, never a second try as YAML.
 */
export function parsePolicyText(text: string): PolicyDocument {
  const source = text.replace(/^\uFEFF/, '')
  // As docs/policy.md says: a file that starts with { or [ is JSON, and only JSON (a JSON file
  // with a syntax error must not pass as the YAML it also resembles).
  if (/^\s*[{[]/.test(source)) {
    let document: unknown
    try {
      document = JSON.parse(source)
    } catch (error) {
      throw jsonSyntaxError(error as SyntaxError, source)
    }
    rejectDuplicateKeys(source)
    return parsePolicyDocument(document)
  }
  return parsePolicyDocument(parseYaml(source))
}

/**
 * JSON.parse keeps the last of two equal keys, so `"policies"` given twice would check only the
 * second list, perhaps empty. A JSON text is also YAML 1.2, whose parser finds the duplicate and
 * its place; only that finding is used here (JSON.parse has already judged the syntax).
 */
function rejectDuplicateKeys(source: string): void {
  const duplicate = parseDocument(source, {uniqueKeys: true, prettyErrors: true}).errors.find(
    (error) => error.code === 'DUPLICATE_KEY',
  )
  if (duplicate)
    throw new AuditError(
      'invalid_json',
      `The policy file is not valid: ${firstLine(duplicate.message).replace('Map keys', 'keys')}`,
      {cause: duplicate},
    )
}

function parseYaml(source: string): unknown {
  const doc = parseDocument(source, {uniqueKeys: true, prettyErrors: true})
  const error = doc.errors[0]
  if (error)
    throw new AuditError('invalid_json', `The policy file is not valid YAML: ${firstLine(error.message)}`, {
      cause: error,
    })
  try {
    return doc.toJS({maxAliasCount: 100})
  } catch (cause) {
    throw new AuditError(
      'invalid_json',
      `The policy file is not valid YAML: ${firstLine(String((cause as Error).message))}`,
      {cause},
    )
  }
}

function jsonSyntaxError(error: SyntaxError, source: string): AuditError {
  const position = /at position (\d+)/.exec(error.message)
  let where = ''
  if (position) {
    const before = source.slice(0, Number(position[1]))
    const line = before.split('\n').length
    where = ` (line ${line}, column ${before.length - before.lastIndexOf('\n')})`
  }
  const reason = error.message.replace(/\s*in JSON at position \d+.*$/s, '')
  return new AuditError('invalid_json', `The policy file is not valid JSON: ${reason}${where}`, {cause: error})
}

function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/:$/, '')
}
