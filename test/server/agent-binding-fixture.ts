/**
 * A service with keys bound to agents (docs/security.md, "Keys bound to agents") and events of
 * agents inside and outside their patterns, shared by the agent-binding tests.
 */
import {parseKeyFile} from '../../src/core/auth/keys.js'
import {startService, type RunningService} from '../../src/server/start.js'
import {makeEvent, removeDir, tempDir} from '../support/harness.js'
import {newMarker} from '../support/markers.js'
import {createTestDatabase, type StoreKind} from '../support/stores.js'

export const ALL = 'unbound-key-0123456789abcdef'
/** Bound to one agent by name. */
export const A = 'agent-a-key-0123456789abcdef'
/** Bound by a pattern with `*`. */
export const TEAM = 'team-a-key-0123456789abcdef'
/** A pattern holding LIKE's `_` and GLOB's `?`, which must match only themselves. */
export const ODD = 'odd-key-0123456789abcdef'

const EVERY_SCOPE = 'read,write,erase,admin,approve'
const KEY_FILE = [
  `${ALL} ${EVERY_SCOPE} name=operator`,
  `${A} ${EVERY_SCOPE} agent=agent-a name=alice`,
  `${TEAM} ${EVERY_SCOPE} agent=team-a-* name=team`,
  `${ODD} read agent=a_b?*`,
].join('\n')

/** The agents recorded, by who may see them. */
export const AGENTS = {
  a: ['agent-a'],
  team: ['team-a-x', 'team-a-y'],
  odd: ['a_b?1'],
  /**
   * Seen by no bound key: `team-b-x` is outside `team-a-*`; `aXb?1` would match `a_b?*` as a LIKE
   * pattern with `_` unescaped, `a_bZ1` as a GLOB pattern with `?` unescaped.
   */
  others: ['agent-b', 'team-b-x', 'aXb?1', 'a_bZ1'],
}

export interface BoundService {
  service: RunningService
  /** A word in the input of every event, found by search. */
  marker: string
  /** Event ids by agent. */
  ids: Record<string, string[]>
  call<T = any>(
    key: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{status: number; body: T; headers: Headers; text: string}>
  close(): Promise<void>
}

export async function startBoundService(
  store: StoreKind,
  options: {otlp?: boolean; forwarding?: Parameters<typeof startService>[0]['forwarding']; otlpGrpcPort?: number} = {},
): Promise<BoundService> {
  const dir = await tempDir()
  const database = store === 'postgres' ? await createTestDatabase() : undefined
  const service = await startService({
    dataDir: dir,
    databaseUrl: database?.url,
    host: '127.0.0.1',
    port: 0,
    apiKeys: parseKeyFile(KEY_FILE),
    app: {otlp: options.otlp ?? false, logError: () => {}},
    stream: {heartbeatMs: 1000},
    forwarding: options.forwarding,
    otlpGrpcPort: options.otlpGrpcPort,
  })
  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = {authorization: `Bearer ${key}`}
    if (body !== undefined) headers['content-type'] = 'application/json'
    const res = await fetch(`${service.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return {status: res.status, body: parsed as any, headers: res.headers, text}
  }
  const marker = newMarker()
  const ids: Record<string, string[]> = {}
  const agents = [...AGENTS.a, ...AGENTS.team, ...AGENTS.odd, ...AGENTS.others]
  // Interleaved, two events an agent: a bound key's events are never a contiguous run of the log.
  for (let round = 0; round < 2; round++)
    for (const agent of agents) {
      const event = makeEvent({
        agent_id: agent,
        action_type: round === 0 ? 'TOOL_CALL' : 'LLM_CALL',
        input: {note: `${marker} ${agent}`},
      })
      const {status, body} = await call(ALL, 'POST', '/v1/events', event)
      if (status !== 201) throw new Error(`could not record the fixture: ${status} ${JSON.stringify(body)}`)
      ;(ids[agent] ??= []).push(body.id)
    }
  return {
    service,
    marker,
    ids,
    call,
    async close() {
      await service.close()
      await database?.drop()
      await removeDir(dir)
    },
  }
}

/** The ids of the agents named. */
export function idsOf(bound: BoundService, agents: readonly string[]): string[] {
  return agents.flatMap((agent) => bound.ids[agent] ?? [])
}
