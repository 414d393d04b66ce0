/**
 * The client recipes of docs/mcp.md, run as printed: the Claude Desktop and VS Code configuration
 * files (parsed from the page, the proxy started exactly as they say, by the SDK's stdio client as
 * those clients do), and the MCP Inspector's command line, passed on as the Inspector's CLI passes
 * it (its options taken, its first `--` removed). Only the server's URL, the key and the folder
 * are replaced by the test's own. `npx` runs from the repository, where it finds this package and
 * the reference filesystem server (a devDependency) without the network.
 */
import {execFile} from 'node:child_process'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {promisify} from 'node:util'
import {expect} from 'chai'
import {Client} from '@modelcontextprotocol/sdk/client/index.js'
import {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'
import type {StoredEvent} from '../../src/core/types.js'
import {ROOT} from '../support/cli.js'
import {removeDir, tempDir} from '../support/harness.js'
import {eventually, startSwitchableLog, type SwitchableLog} from '../support/mcp.js'

const PAGE = readFileSync(path.join(ROOT, 'docs', 'mcp.md'), 'utf8')
const KEY = 'recipe-key-0123456789abcdef'
// `npx audit-trail` from the repository links this package and runs its `prepare` (a rebuild of
// dist/ under the other test files running from it); `npm test` has built it already.
const NPX_ENV = {npm_config_ignore_scripts: 'true'}

/** The fenced blocks of docs/mcp.md in `language`. */
function blocks(language: string): string[] {
  const found = [...PAGE.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))]
  return found.map((match) => match[1]!)
}

interface StdioEntry {
  command: string
  args: string[]
  env?: Record<string, string>
}

/** The page's placeholders replaced with the test's log, key and folder. */
function localised(text: string, log: SwitchableLog, folder: string): string {
  return text
    .replaceAll('http://127.0.0.1:8080', log.url)
    .replaceAll('/srv/docs', folder)
    .replaceAll('${input:audit-key}', KEY)
    .replaceAll('<a key with the write scope>', KEY)
}

/** The single server of a configuration file, under `mcpServers` (Claude Desktop) or `servers` (VS Code). */
function configEntry(marker: string, log: SwitchableLog, folder: string): StdioEntry {
  const file = blocks('json').find((block) => block.includes(marker))
  expect(file, `a json block with ${marker} in docs/mcp.md`).to.be.a('string')
  const config = JSON.parse(localised(file!, log, folder)) as Record<string, Record<string, StdioEntry>>
  const entries = Object.values(config[marker.replaceAll('"', '')]!)
  expect(entries).to.have.length(1)
  return entries[0]!
}

/**
 * What the Inspector's CLI starts for its words (after `npx @modelcontextprotocol/inspector`):
 * its first `--` is removed; its own options (commander, @modelcontextprotocol/inspector 1.0 and
 * 2.x) are taken until the first option it does not know, after which every word is the target.
 */
function asInspectorStarts(words: string[]) {
  const valued = new Set(['-e', '--config', '--server', '--method', '--tool-name', '--transport', '--cwd'])
  const separator = words.indexOf('--')
  const rest = separator < 0 ? words : [...words.slice(0, separator), ...words.slice(separator + 1)]
  const options: Record<string, string[]> = {}
  const target: string[] = []
  let unknownSeen = false
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!
    if (!unknownSeen && word === '--cli') continue
    if (!unknownSeen && valued.has(word)) (options[word] ??= []).push(rest[++i]!)
    else {
      unknownSeen ||= word.startsWith('-')
      target.push(word)
    }
  }
  const env = Object.fromEntries((options['-e'] ?? []).map((pair) => pair.split('=', 2) as [string, string]))
  return {env, method: options['--method']?.[0], toolName: options['--tool-name']?.[0], target}
}

/** The command lines of a bash block, continuation lines joined, split into words (the recipes quote nothing). */
function commandLines(block: string): string[][] {
  expect(block).not.to.match(/["'$`]/)
  return block
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => line.trim().split(/\s+/))
}

describe('docs/mcp.md client recipes', function () {
  this.timeout(180_000)
  let log: SwitchableLog
  let folder: string
  let state: string

  beforeEach(async () => {
    folder = await tempDir()
    state = await tempDir()
  })

  afterEach(async () => {
    await log?.close()
    await removeDir(folder)
    await removeDir(state)
  })

  /** Starts `entry` as a stdio client would, calls one tool, and closes; the tool's answer. */
  async function callThrough(entry: StdioEntry, tool: string): Promise<string> {
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: {...entry.env, ...NPX_ENV, XDG_STATE_HOME: state},
      cwd: ROOT,
      stderr: 'pipe',
    })
    let stderr = ''
    transport.stderr?.on('data', (chunk) => (stderr += chunk))
    const client = new Client({name: 'recipe-client', version: '1.0.0'})
    try {
      await client.connect(transport)
      const result = await client.callTool({name: tool, arguments: {}})
      return JSON.stringify(result.content)
    } catch (error) {
      throw new Error(`${(error as Error).message}; the proxy said: ${stderr}`, {cause: error})
    } finally {
      await client.close()
    }
  }

  const toolCalls = async (agent: string) => {
    const events: StoredEvent[] = await log.events()
    const calls = events.filter((e) => e.agent_id === agent && e.action_type === 'TOOL_CALL')
    expect(calls.map((e) => `${e.action_name} ${e.action_status}`)).to.deep.equal(['list_allowed_directories success'])
    return calls
  }

  for (const [client, marker] of [
    ['Claude Desktop', '"mcpServers"'],
    ['VS Code', '"servers"'],
  ] as const) {
    it(`the ${client} configuration starts the proxy, which records the call with the key`, async () => {
      log = await startSwitchableLog({apiKeys: `${KEY} write\n`})
      const entry = configEntry(marker, log, folder)
      const answer = await callThrough(entry, 'list_allowed_directories')
      expect(answer).to.include(path.basename(folder))
      const agent = entry.args.includes('--agent-id')
        ? entry.args[entry.args.indexOf('--agent-id') + 1]!
        : 'recipe-client'
      await eventually(() => toolCalls(agent))
    })
  }

  it('the MCP Inspector command line starts the proxy without its --, and events list shows the call', async () => {
    log = await startSwitchableLog()
    const [recipe] = blocks('bash').filter((block) => block.includes('@modelcontextprotocol/inspector --cli'))
    const [inspector, eventsList] = commandLines(localised(recipe!, log, folder))
    expect(inspector!.slice(0, 2)).to.deep.equal(['npx', '@modelcontextprotocol/inspector'])
    const launch = asInspectorStarts(inspector!.slice(2))
    expect(launch.method).to.equal('tools/call')
    const [command, ...args] = launch.target
    const answer = await callThrough({command: command!, args, env: launch.env}, launch.toolName!)
    expect(answer).to.include(path.basename(folder))
    await eventually(() => toolCalls('inspector'))
    const listed = await promisify(execFile)(eventsList![0]!, eventsList!.slice(1), {
      cwd: ROOT,
      env: {...process.env, ...NPX_ENV},
    })
    expect(listed.stdout).to.match(/inspector .* TOOL_CALL +list_allowed_directories +success/)
  })
})
