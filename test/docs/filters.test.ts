/**
 * docs/verification.md section 4 lists every member the `filters` of a package can carry; a
 * verifier written from the page refuses any other. The list must be the code's (FILTER_MEMBERS),
 * and the code's must be what an export writes.
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {expect} from 'chai'
import {FILTER_MEMBERS, parseExportQuery} from '../../src/core/query-params.js'
import {ROOT} from '../support/cli.js'

/** The doc's words for each kind of value. */
const KIND_WORDS = {text: 'string', time: 'time', labels: 'object of strings', patterns: 'array of agent patterns'}

/** The rows of the filter table in section 4: member and the kind of its value. */
function documentedFilters(): Array<[string, string]> {
  const page = readFileSync(path.join(ROOT, 'docs', 'verification.md'), 'utf8')
  const section = page.slice(page.indexOf('## 4. Completeness'), page.indexOf('## 5.'))
  const rows = [...section.matchAll(/^\s*\| `([a-z_]+)` \| ([^|]+?) \|/gm)]
  return rows.map((row) => [row[1]!, row[2]!])
}

describe('docs/verification.md section 4: the members of filters', () => {
  it('lists exactly the members of the code, each with the kind of its value', () => {
    const expected = Object.entries(FILTER_MEMBERS).map(([name, kind]) => [name, KIND_WORDS[kind]])
    expect(documentedFilters()).to.deep.equal(expected)
  })

  it('is the list of what an export can write: every filter of GET /v1/export set at once', () => {
    const filter = parseExportQuery({
      agent_id: 'a',
      action_type: 'TOOL_CALL',
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      session_id: 's-1',
      since: '2026-11-21T00:00:00Z',
      until: '2026-11-22T00:00:00Z',
      'label.env': 'prod',
    })
    // `agents` is the key's binding, never a parameter: test/server/agent-binding.test.ts exports with it.
    const fromParameters = Object.keys(FILTER_MEMBERS).filter((name) => name !== 'agents')
    expect(Object.keys(filter).sort()).to.deep.equal(fromParameters.sort())
  })
})
