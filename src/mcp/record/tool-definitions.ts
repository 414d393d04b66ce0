/**
 * Watches the tool definitions a server announces (`tools/list`, MCP "Tools"): when a tool is new,
 * gone, or its definition (name, title, description, schemas, annotations) differs from the one
 * last seen from the same server, that is an event `TOOL_DEFINITIONS_CHANGED` carrying the digest
 * of each tool, so a definition swapped under an agent ("rug pull") is on the record next to the
 * calls it shaped. The last definitions seen are kept per server in the state directory, so the
 * comparison spans proxy runs.
 */
import {mkdir, readFile, rename, writeFile} from 'node:fs/promises'
import path from 'node:path'
import canonicalize from 'canonicalize'
import {v7 as uuidv7} from 'uuid'
import {sha256Hex} from '../../core/crypto.js'
import {recordValue} from './recorded-value.js'
import type {CallContext} from './session.js'

interface ToolChange {
  /** Every tool of the answer, name to the SHA-256 of its definition's RFC 8785 form. */
  digests: Record<string, string>
  added: string[]
  changed: string[]
  /** Known only from a complete list (a first page without a next one). */
  removed: string[]
  /** Whether the server's definitions were known before (from this run or an earlier one). */
  first: boolean
}

type Digests = Record<string, string>

function toolsOf(result: unknown): Array<Record<string, unknown>> | undefined {
  const tools = (result as {tools?: unknown} | undefined)?.tools
  if (!Array.isArray(tools)) return undefined
  return tools.filter((t): t is Record<string, unknown> => typeof t === 'object' && t !== null && !Array.isArray(t))
}

function toolDigest(tool: Record<string, unknown>): string {
  return sha256Hex(canonicalize(tool) ?? 'null')
}

export class ToolDefinitionWatch {
  readonly #dir: string | undefined
  readonly #known = new Map<string, Promise<Digests | undefined>>()

  /** `dir`: where the last definitions of each server are kept; none keeps them for this run only. */
  constructor(dir?: string) {
    this.#dir = dir
  }

  /**
   * Compares a `tools/list` answer of `server` with what was seen before; undefined when nothing
   * changed. `params` is the request's (a `cursor` means a later page, which cannot show removals).
   */
  async observe(server: string, params: unknown, result: unknown): Promise<ToolChange | undefined> {
    const tools = toolsOf(result)
    if (tools === undefined) return undefined
    const complete =
      (params as {cursor?: unknown} | undefined)?.cursor === undefined &&
      (result as {nextCursor?: unknown}).nextCursor === undefined
    const digests: Digests = {}
    for (const tool of tools) if (typeof tool.name === 'string') digests[tool.name] = toolDigest(tool)
    const pending = this.#known.get(server) ?? this.#load(server)
    // Chained per server, so that two answers in flight compare in the order they came.
    let change: ToolChange | undefined
    const next = pending.then(async (before) => {
      const added = Object.keys(digests).filter((name) => before?.[name] === undefined)
      const changed = Object.keys(digests).filter(
        (name) => before?.[name] !== undefined && before[name] !== digests[name],
      )
      const removed = complete && before ? Object.keys(before).filter((name) => digests[name] === undefined) : []
      const after: Digests = complete ? {...digests} : {...before, ...digests}
      if (added.length + changed.length + removed.length === 0 && before !== undefined) return before
      change = {digests, added, changed, removed, first: before === undefined}
      // Kept for this run even when the file cannot be written; the next run then compares with older ones.
      await this.#save(server, after).catch(() => undefined)
      return after
    })
    this.#known.set(server, next)
    await next
    return change
  }

  #file(server: string): string | undefined {
    return this.#dir === undefined ? undefined : path.join(this.#dir, `${sha256Hex(server).slice(0, 32)}.json`)
  }

  async #load(server: string): Promise<Digests | undefined> {
    const file = this.#file(server)
    if (file === undefined) return undefined
    try {
      const saved = JSON.parse(await readFile(file, 'utf8')) as {server?: unknown; tools?: unknown}
      return saved.server === server && typeof saved.tools === 'object' && saved.tools !== null
        ? (saved.tools as Digests)
        : undefined
    } catch {
      return undefined
    }
  }

  /** Written to a temporary file and renamed, so that a reader never sees half a file. */
  async #save(server: string, tools: Digests): Promise<void> {
    const file = this.#file(server)
    if (file === undefined) return
    await mkdir(path.dirname(file), {recursive: true})
    const temporary = `${file}.${process.pid}.tmp`
    await writeFile(temporary, JSON.stringify({server, tools}))
    await rename(temporary, file)
  }
}

/** The event of a change: the new definitions as `output` (within the record limit), the digests as `metadata`. */
export function toolsChangedEvent(
  context: CallContext,
  change: ToolChange,
  result: unknown,
  recordLimit: number,
): Record<string, unknown> {
  const recorded = recordValue((result as {tools?: unknown}).tools, recordLimit)
  // The digests of a server with thousands of tools would not fit one event: then their digest.
  const digests = recordValue(
    {tools: change.digests, added: change.added, changed: change.changed, removed: change.removed},
    recordLimit,
  )
  const metadata: Record<string, unknown> = digests.omitted
    ? {tool_digests: digests.value}
    : {...(digests.value as object)}
  metadata.first_seen = change.first
  const omitted = [...(recorded.omitted ? ['output'] : []), ...(digests.omitted ? ['metadata.tool_digests'] : [])]
  if (omitted.length > 0) metadata.omitted = omitted
  const event: Record<string, unknown> = {
    id: uuidv7(),
    agent_id: context.agentId,
    action_type: 'TOOL_DEFINITIONS_CHANGED',
    action_name: 'tools/list',
    timestamp: new Date().toISOString(),
    labels: context.labels,
    output: recorded.value,
    metadata,
  }
  if (context.sessionId !== undefined) event.session_id = context.sessionId
  return event
}
