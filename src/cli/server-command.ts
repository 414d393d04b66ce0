/**
 * The MCP server's command line on `mcp-proxy`'s (docs/mcp.md, "Client configuration"):
 * everything after `--`, or, where a client launched the proxy and dropped the `--` (the MCP
 * Inspector's CLI does), everything from the first argument that is neither one of the proxy's
 * flags nor the value of one. A `--` after that belongs to the server's command.
 */
import {AuditError} from '../core/errors.js'
import {withFlagHint} from './output.js'

/** What the split needs of an oclif flag definition. */
export interface FlagShape {
  type: 'boolean' | 'option'
  char?: string
}

export interface SplitCommandLine {
  /** The proxy's own arguments. */
  own: string[]
  /** The MCP server's command and its arguments; empty when none was given. */
  command: string[]
}

export function splitServerCommand(
  argv: readonly string[],
  flags: Readonly<Record<string, FlagShape>>,
): SplitCommandLine {
  const takesValue = new Map<string, boolean>()
  for (const [name, flag] of Object.entries(flags)) {
    takesValue.set(`--${name}`, flag.type === 'option')
    if (flag.char !== undefined) takesValue.set(`-${flag.char}`, flag.type === 'option')
  }
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!
    if (token === '--') return {own: argv.slice(0, i), command: argv.slice(i + 1)}
    if (!token.startsWith('-') || token === '-') return {own: argv.slice(0, i), command: argv.slice(i)}
    const equals = token.indexOf('=')
    const option = takesValue.get(equals < 0 ? token : token.slice(0, equals))
    if (option === undefined) throw unknownFlag(token, Object.keys(flags))
    if (option && equals < 0) i++
  }
  return {own: [...argv], command: []}
}

function unknownFlag(token: string, flagNames: readonly string[]): AuditError {
  return new AuditError(
    'validation_error',
    `${withFlagHint(`Nonexistent flag: ${token}`, flagNames)}; if it belongs to the MCP server's command, give ` +
      `that command after -- (mcp-proxy --data-dir DIR -- npx -y @modelcontextprotocol/server-filesystem /srv) or, ` +
      `where the client drops the -- (the MCP Inspector does), right after the proxy's flags, starting with the ` +
      `program's name`,
  )
}
