/**
 * A log with everything a package can hold, recorded through the HTTP API of a test server: agent
 * keys registered and revoked, signed events, a signed statement (POST /entries), plain events in
 * sessions and traces, and erasures (of a plain event and of the statement). The corpus and the
 * property test export packages of it and tamper with them.
 */
import {generateSigningJwk, publicJwkOf} from '../../../src/core/crypto.js'
import {jwkThumbprint} from '../../../src/core/jws/jwk.js'
import {signEvent} from '../../../src/index.js'
import type {TestApi} from '../../support/harness.js'
import {signedStatement, testAgentKey} from '../../support/statements.js'

export interface CorpusLog {
  /** The signed event of `signer` before and after its key rotation. */
  signed: string[]
  statement: string
  /** The plain events of `bot`, in order (the first is erased: input). */
  bot: string[]
  erasure: string
}

async function ok(response: Promise<{status: number; text: string; body: any}>, status: number[] = [200, 201]) {
  const answer = await response
  if (!status.includes(answer.status)) throw new Error(`unexpected ${answer.status}: ${answer.text}`)
  return answer.body
}

/** A signing key for `agent` (Ed25519) registered over the API; returns its private JWK and kid. */
async function registerKey(api: TestApi, agent: string) {
  const key = generateSigningJwk('Ed25519')
  const jwk = publicJwkOf(key)
  const kid = jwkThumbprint(jwk)
  await ok(api.request('PUT', `/v1/agents/${agent}/keys/${kid}`, {body: jwk}))
  return {key, kid}
}

/** Records the corpus log; `extra` plain events of `bot` (a property test's random payloads) come last. */
export async function recordCorpusLog(api: TestApi, extra: Array<Record<string, unknown>> = []): Promise<CorpusLog> {
  const post = (body: unknown) => ok(api.request('POST', '/v1/events', {body}))
  const first = await registerKey(api, 'signer')
  const bot: string[] = []
  const botEvent = (i: number) => ({
    agent_id: 'bot',
    action_type: 'TOOL_CALL',
    action_name: `step-${i}`,
    session_id: i % 2 === 0 ? 's-even' : 's-odd',
    trace_id: `t-${i}`,
    labels: {env: i % 2 === 0 ? 'prod' : 'dev'},
    input: {question: `q${i}`},
    output: `a${i}`,
    metadata: {turn: i},
    ...(i === 1 ? {error: 'timeout'} : {}),
  })
  for (let i = 0; i < 3; i++) bot.push((await post(botEvent(i))).id)
  const signedAction = {agent_id: 'signer', action_type: 'TOOL_CALL', action_name: 'sign', input: {n: 1}, error: 'e'}
  const signed = [(await post(signEvent({...signedAction, metadata: {k: 1}}, first.key))).id]
  // The statement, signed by a key of node:crypto (test/support/statements.ts), registered for `signer`.
  const coseKey = testAgentKey('Ed25519')
  await ok(api.request('PUT', `/v1/agents/signer/keys/${coseKey.kid}`, {body: coseKey.jwk}))
  const registered = await fetch(`${api.url}/entries`, {
    method: 'POST',
    body: signedStatement(coseKey, {iss: 'signer', sub: 'release-1'}) as BodyInit,
    headers: {'content-type': 'application/cose'},
  })
  if (registered.status !== 201) throw new Error(`POST /entries: ${registered.status}`)
  const statement = registered.headers.get('location')!.replace('/entries/', '')
  const second = await registerKey(api, 'signer')
  await ok(api.request('DELETE', `/v1/agents/signer/keys/${first.kid}`))
  signed.push((await post(signEvent({...signedAction, output: [1, 2]}, second.key))).id)
  const erased = await ok(
    api.request('POST', '/v1/erasures', {
      body: {ids: [bot[0], statement], members: ['input'], reason: 'customer request'},
    }),
  )
  for (let i = 3; i < 5; i++) bot.push((await post(botEvent(i))).id)
  // A key event after the revocation: the revocation is inside the keys chain, not its tail
  // (docs/verification.md 8 says what a tail can and cannot show).
  await registerKey(api, 'other')
  for (const body of extra) bot.push((await post({agent_id: 'bot', action_type: 'TOOL_CALL', ...body})).id)
  return {signed, statement, bot, erasure: erased.erasure.id}
}

/** GET /v1/export with these query parameters, parsed. */
export async function exportPackage(api: TestApi, query = ''): Promise<any> {
  const answer = await api.request('GET', `/v1/export${query === '' ? '' : `?${query}`}`)
  if (answer.status !== 200) throw new Error(`GET /v1/export?${query}: ${answer.status} ${answer.text}`)
  return answer.body
}
