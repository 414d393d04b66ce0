/**
 * Renders a policy report (docs/api.md, Policy; README, `policy check --format
 * text|json|junit`). `junit` is the JUnit XML that GitHub Actions and GitLab CI read: one test case
 * per rule, one failure per violated rule. Output has no trailing newline; the caller prints it.
 */
import {Chalk} from 'chalk'
import {MAX_LISTED_VIOLATIONS, type PolicyReport, type RuleResult, type Violation} from '../core/policy/index.js'
import {plural} from './output.js'

type PolicyReportFormat = 'text' | 'json' | 'junit'

export function formatPolicyReport(
  report: PolicyReport,
  format: PolicyReportFormat,
  options: {color?: boolean} = {},
): string {
  switch (format) {
    case 'text':
      return formatText(report, options.color === true)
    case 'json':
      return JSON.stringify(report, null, 2)
    case 'junit':
      return formatJunit(report)
  }
}

function formatText(report: PolicyReport, color: boolean): string {
  const paint = new Chalk({level: color ? 1 : 0})
  const failed = report.results.filter((result) => !result.passed).length
  const lines: string[] = []
  for (const result of report.results) {
    const status = result.passed ? paint.green('pass') : paint.red.bold('FAIL')
    const count = result.passed ? '' : ` (${plural(result.violation_count, 'violation')})`
    lines.push(`${status} ${result.name} [${result.type}]${count}`)
    for (const line of violationLines(result)) lines.push(`     ${paint.dim('-')} ${line}`)
  }
  lines.push(...heldCallLines(report))
  const events = plural(report.events_checked, 'event')
  const rules = plural(report.results.length, 'rule')
  lines.push(
    report.passed
      ? paint.green(`Policy check passed: ${rules} over ${events}.`)
      : paint.red.bold(`Policy check failed: ${failed} of ${rules} violated over ${events}.`),
  )
  return lines.join('\n')
}

/** The calls held for a decision in the checked scope (docs/oversight.md), one line each. */
function heldCallLines(report: PolicyReport): string[] {
  const held = report.approvals ?? []
  if (held.length === 0) return []
  return [
    `held calls: ${held.length}`,
    ...held.map((call) => {
      const by = call.decided_by === null ? '' : ` by ${call.decided_by}`
      const reason = call.reason === null ? '' : `: ${call.reason}`
      const what = `${call.agent_id} ${call.action_name} (rule ${call.rule})`
      return `     - ${call.requested_at} ${what} ${call.state}${by}${reason}`
    }),
  ]
}

/** The listed violations (at most 100) and a line saying how many more the count holds. */
function violationLines(result: RuleResult): string[] {
  const shown = result.violations.slice(0, MAX_LISTED_VIOLATIONS)
  const lines = shown.map(describeViolation)
  const more = result.violation_count - shown.length
  if (more > 0) lines.push(`... and ${plural(more, 'more violation')} not listed`)
  return lines
}

/** `[event 0190..., sequence 7] message`; messages already name the agent they concern. */
function describeViolation(violation: Violation): string {
  const where: string[] = []
  if (violation.event_id !== null) where.push(`event ${violation.event_id}`)
  if (violation.sequence !== null) where.push(`sequence ${violation.sequence}`)
  return where.length === 0 ? violation.message : `[${where.join(', ')}] ${violation.message}`
}

function formatJunit(report: PolicyReport): string {
  const failures = report.results.filter((result) => !result.passed).length
  const counts = `tests="${report.results.length}" failures="${failures}" errors="0"`
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="audit-trail policy" ${counts}>`,
    `  <testsuite name="audit-trail policy" ${counts} skipped="0">`,
    '    <properties>',
    `      <property name="events_checked" value="${report.events_checked}"/>`,
    '    </properties>',
  ]
  for (const result of report.results) {
    const name = escapeXml(result.name)
    const open = `    <testcase name="${name}" classname="audit-trail.policy.${escapeXml(result.type)}"`
    if (result.passed) {
      lines.push(`${open}/>`)
      continue
    }
    const first = result.violations[0]?.message ?? ''
    const message = `${plural(result.violation_count, 'violation')}${first ? `: ${first}` : ''}`
    lines.push(`${open}>`)
    lines.push(
      `      <failure message="${escapeXml(message)}" type="${escapeXml(result.type)}` +
        `">${escapeXml(violationLines(result).join('\n'), 'text')}</failure>`,
    )
    lines.push('    </testcase>')
  }
  lines.push('  </testsuite>', '</testsuites>')
  return lines.join('\n')
}

/**
 * The JUnit document of a check that could not run (bad input, an unreachable server): one
 * errored test case giving the reason, so that a CI reporter shows why instead of failing on an
 * empty file.
 */
export function formatJunitError(reason: string): string {
  const counts = 'tests="1" failures="0" errors="1"'
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="audit-trail policy" ${counts}>`,
    `  <testsuite name="audit-trail policy" ${counts} skipped="0">`,
    '    <testcase name="policy check" classname="audit-trail.policy">',
    `      <error message="${escapeXml(reason)}" type="error">${escapeXml(reason, 'text')}</error>`,
    '    </testcase>',
    '  </testsuite>',
    '</testsuites>',
  ].join('\n')
}

/**
 * Escapes text for XML 1.0 content and double-quoted attributes. Characters XML 1.0 section 2.2
 * forbids even as references (most C0 controls, lone surrogates, U+FFFE/U+FFFF) become U+FFFD.
 * Carriage returns always, and tabs and newlines in attributes, become references, because XML
 * 1.0 sections 2.11 and 3.3.3 would otherwise normalise them away.
 */
export function escapeXml(text: string, where: 'attribute' | 'text' = 'attribute'): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      out += text[i]! + text[i + 1]!
      i++
    } else if (where === 'text' && (code === 0x09 || code === 0x0a)) out += text[i]!
    else out += escapeUnit(text[i]!, code)
  }
  return out
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}

function escapeUnit(char: string, code: number): string {
  switch (char) {
    case '&':
      return '&amp;'
    case '<':
      return '&lt;'
    case '>':
      return '&gt;'
    case '"':
      return '&quot;'
    case "'":
      return '&apos;'
    case '\t':
      return '&#9;'
    case '\n':
      return '&#10;'
    case '\r':
      return '&#13;'
  }
  const forbidden = code < 0x20 || (code >= 0xd800 && code <= 0xdfff) || code === 0xfffe || code === 0xffff
  return forbidden ? '\uFFFD' : char
}
