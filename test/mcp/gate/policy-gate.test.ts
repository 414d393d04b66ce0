import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {expect} from 'chai'
import {parsePolicyDocument} from '../../../src/core/policy/index.js'
import {PolicyGate} from '../../../src/mcp/gate/policy-gate.js'
import {removeDir, tempDir} from '../../support/harness.js'

const labels = {'mcp.server': 'files', 'mcp.transport': 'stdio'}
const toolCall = (name: string, agent = 'claude') => ({
  agent_id: agent,
  action_type: 'TOOL_CALL',
  action_name: name,
  labels,
})

describe('PolicyGate (forbidden_action and allowed_actions before forwarding)', () => {
  const gate = new PolicyGate(
    parsePolicyDocument({
      policies: [
        {name: 'no-writes', type: 'forbidden_action', match: {action_type: 'TOOL_CALL', action_name: 'write_*'}},
        {
          name: 'read-only-files',
          type: 'allowed_actions',
          agent_id: 'claude*',
          match: [{action_type: 'MCP_REQUEST'}, {action_name: 'read_*', labels: {'mcp.server': 'files'}}],
        },
        {name: 'chains', type: 'chain_integrity'},
      ],
    }),
  )

  it('refuses a forbidden tool, naming the rule', () => {
    expect(gate.check(toolCall('write_file'))).to.deep.equal({
      rule: 'no-writes',
      type: 'forbidden_action',
      message: 'refused by policy rule "no-writes" (forbidden_action): TOOL_CALL write_file is forbidden',
    })
  })

  it('refuses what an allow-list does not name, for the agents it covers only', () => {
    expect(gate.check(toolCall('delete_file'))?.rule).to.equal('read-only-files')
    expect(gate.check(toolCall('delete_file', 'other-agent'))).to.equal(undefined)
    expect(gate.check(toolCall('read_file'))).to.equal(undefined)
    expect(gate.check({...toolCall('tools/list'), action_type: 'MCP_REQUEST'})).to.equal(undefined)
  })

  it('leaves the rules that need the whole log to policy check, and says which', () => {
    expect(gate.notEnforced.map((rule) => rule.name)).to.deep.equal(['chains'])
  })

  it('honours the document scope agent_id', () => {
    const scoped = new PolicyGate(
      parsePolicyDocument({
        policies: [{name: 'none', type: 'forbidden_action', match: {}}],
        scope: {agent_id: 'prod-bot'},
      }),
    )
    expect(scoped.check(toolCall('x', 'prod-bot'))?.rule).to.equal('none')
    expect(scoped.check(toolCall('x', 'dev-bot'))).to.equal(undefined)
  })

  it('reads a YAML file, and names a bad one', async () => {
    const dir = await tempDir()
    try {
      const file = path.join(dir, 'policy.yaml')
      await writeFile(
        file,
        'policies:\n  - name: no-exec\n    type: forbidden_action\n    match: {action_name: exec}\n',
      )
      expect((await PolicyGate.fromFile(file)).check(toolCall('exec'))?.rule).to.equal('no-exec')
      await writeFile(file, 'policies:\n  - name: x\n    type: forbidden_action\n')
      let error: Error | undefined
      await PolicyGate.fromFile(file).catch((e: Error) => (error = e))
      expect(error?.message).to.match(/"x"/)
    } finally {
      await removeDir(dir)
    }
  })
})
