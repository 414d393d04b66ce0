// The policy check form: JSON rules in a textarea, POST /v1/policy/check, results per rule with
// the violations the service lists (at most 100 per rule; the count is exact).

import {ApiError, postJson} from './api.js'
import {byId, fill, formatNumber, h, verdict} from './dom.js'

const EXAMPLE = {
  policies: [
    {name: 'chains-intact', type: 'chain_integrity'},
    {name: 'few-failures', type: 'max_failure_rate', max: 0.2, min_events: 10},
    {name: 'no-shell-in-prod', type: 'forbidden_action', match: {action_name: 'shell*', labels: {env: 'prod'}}},
    {name: 'owner-label', type: 'required_labels', labels: ['env']},
  ],
}

export function init(context) {
  const input = byId('policy-input')
  input.value = JSON.stringify(EXAMPLE, null, 2)
  byId('policy-form').addEventListener('submit', async (submit) => {
    submit.preventDefault()
    let body
    try {
      const parsed = JSON.parse(input.value)
      body = Array.isArray(parsed) ? {policies: parsed} : parsed
    } catch (error) {
      fill('policy-result', h('p', {class: 'bad', role: 'alert'}, `The policies are not valid JSON: ${error.message}`))
      return
    }
    const button = submit.submitter ?? byId('policy-form').querySelector('button')
    button.disabled = true
    fill('policy-result', 'Checking…')
    try {
      renderReport(await postJson('/v1/policy/check', body))
    } catch (error) {
      if (!(error instanceof ApiError)) {
        fill('policy-result')
        context.handleError(error)
        return
      }
      fill(
        'policy-result',
        h(
          'div',
          {class: 'bad', role: 'alert'},
          h('p', {}, `The service rejected the policies: ${error.message}`),
          h(
            'ul',
            {},
            error.details.map((detail) => h('li', {}, `${detail.field}: ${detail.message}`)),
          ),
        ),
      )
    } finally {
      button.disabled = false
    }
  })
}

export async function show() {}

function renderReport(report) {
  const failed = report.results.filter((result) => !result.passed)
  fill(
    'policy-result',
    h(
      'p',
      {class: 'summary'},
      verdict(
        report.passed,
        `Passed: all ${report.results.length} rules hold over ${formatNumber(report.events_checked)} events.`,
        `Failed: ${failed.length} of ${report.results.length} rules violated over ` +
          `${formatNumber(report.events_checked)} events.`,
      ),
    ),
    h(
      'table',
      {class: 'data'},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Rule', 'Type', 'Result', 'Violations'].map((title) => h('th', {scope: 'col'}, title)),
        ),
      ),
      h(
        'tbody',
        {},
        report.results.map((result) =>
          h(
            'tr',
            {},
            h('th', {scope: 'row'}, result.name),
            h('td', {}, result.type),
            h('td', {}, verdict(result.passed, 'passed', 'violated')),
            h('td', {class: 'num'}, formatNumber(result.violation_count)),
          ),
        ),
      ),
    ),
    failed.map(renderViolations),
  )
}

function renderViolations(result) {
  const more = result.violation_count - result.violations.length
  return h(
    'section',
    {class: 'panel', 'aria-label': `Violations of ${result.name}`},
    h(
      'h2',
      {},
      `${result.name}: ${formatNumber(result.violation_count)} violation${result.violation_count === 1 ? '' : 's'}`,
    ),
    h(
      'ul',
      {class: 'violations'},
      result.violations.map((violation) =>
        h(
          'li',
          {},
          violation.event_id
            ? h(
                'a',
                {href: `#/events/${encodeURIComponent(violation.event_id)}`},
                `${violation.agent_id ?? ''} #${violation.sequence ?? '?'}`,
              )
            : (violation.agent_id ?? ''),
          violation.event_id || violation.agent_id ? ': ' : '',
          violation.message,
        ),
      ),
    ),
    more > 0 ? h('p', {class: 'hint'}, `and ${formatNumber(more)} more not listed`) : null,
  )
}
