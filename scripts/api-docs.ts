/**
 * Writes docs/api.md from a real run: starts the service on a temporary data directory, sends
 * every documented request, and records each request and response as it happened.
 * Run: node --import tsx scripts/api-docs.ts
 */
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import WebSocket from 'ws'
import {startService} from '../src/server/start.js'
import {signEvent} from '../src/index.js'
import {parseDestination} from '../src/services/forwarding/index.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dir = await mkdtemp(path.join(os.tmpdir(), 'atrail-docs-'))
const service = await startService({
  dataDir: dir,
  host: '127.0.0.1',
  port: 0,
  origin: 'audit.example.com/log',
  app: {otlp: true},
  // A syslog receiver that is not there, so GET /v1/forwarding shows a destination retrying.
  forwarding: {destinations: [parseDestination('syslog+tcp://127.0.0.1:9')], onError: () => undefined},
})
const base = 'http://127.0.0.1:8080'
const sections: string[] = []

function shorten(value: unknown): unknown {
  if (Array.isArray(value))
    return value.length > 3 ? [...value.slice(0, 3).map(shorten), `... ${value.length - 3} more`] : value.map(shorten)
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v)]))
  if (typeof value === 'string' && value.length > 200) return `${value.slice(0, 120)}...(${value.length} chars)`
  return value
}

async function call(
  title: string,
  description: string,
  method: string,
  pathAndQuery: string,
  body?: unknown,
  show = true,
): Promise<any> {
  const headers: Record<string, string> = body === undefined ? {} : {'content-type': 'application/json'}
  const res = await fetch(`${service.url}${pathAndQuery}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // PEM or other text
  }
  if (show) {
    const curl = [`curl -s -X ${method} '${base}${pathAndQuery}'`]
    if (body !== undefined) curl.push(`  -H 'content-type: application/json' -d '${JSON.stringify(body)}'`)
    const interesting = ['x-total-count', 'content-disposition', 'www-authenticate']
      .filter((h) => res.headers.get(h))
      .map((h) => `${h}: ${res.headers.get(h)}`)
    sections.push(
      `### ${title}\n\n${description}\n\n\`\`\`sh\n${curl.join(' \\\n')}\n\`\`\`\n\nResponse \`${res.status}` +
        `\`${interesting.length ? ` (${interesting.join('; ')})` : ''}` +
        `:\n\n\`\`\`${typeof parsed === 'string' ? '' : 'json'}` +
        `\n${typeof parsed === 'string' ? parsed.trim() : JSON.stringify(shorten(parsed), null, 2)}\n\`\`\`\n`,
    )
  }
  return parsed
}

sections.push('## Ingest\n')
const first = await call(
  'POST /v1/events',
  'Records one event. `agent_id`, `action_type` and `action_name` are required; the service adds `sequence`, ' +
    '`prev_hash`, `recorded_at`, `hash` and `index`. 201 when recorded, 200 when the same `id` is retried with the ' +
    'same fields, 409 when it differs.',
  'POST',
  '/v1/events',
  {
    id: '0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8091',
    agent_id: 'support-bot',
    action_type: 'TOOL_CALL',
    action_name: 'crm.lookup_customer',
    timestamp: '2026-11-21T09:00:02Z',
    labels: {env: 'prod'},
    input: {customer_id: 'C-1009'},
    duration_ms: 95,
  },
)
await call(
  'POST /v1/events (validation error)',
  'Every failing field is listed in `details`; nothing is recorded.',
  'POST',
  '/v1/events',
  {agent_id: '', action_type: 'tool call', action_name: 'x', colour: 'red'},
)
await call(
  'POST /v1/batch',
  'Up to 1000 events (more: 413 `payload_too_large`; an empty array or not an array: 400). One result per element,' +
    ' in request order; 201 when all succeeded, 207 when at least one failed. Failed elements never block the ' +
    'others. The body may be up to 16 MiB (more: 413); the 1 MiB limit of `POST /v1/events` is a limit on that ' +
    "request's body, so a batch element is not held to it on its own. An element of an agent the key is not " +
    'bound to gets its own `403` result (`forbidden`, naming the agent; docs/security.md).',
  'POST',
  '/v1/batch',
  [
    {
      agent_id: 'support-bot',
      action_type: 'LLM_CALL',
      action_name: 'chat.completions',
      labels: {env: 'prod'},
      output: {text: 'Customer cannot log in.'},
    },
    {agent_id: 'billing-bot', action_type: 'NOT VALID', action_name: 'refund'},
    {
      agent_id: 'billing-bot',
      action_type: 'API_CALL',
      action_name: 'payments.refund',
      action_status: 'failure',
      error: 'card declined',
      labels: {env: 'prod'},
    },
  ],
)
sections.push('## Query\n')
await call(
  'GET /v1/events',
  'Filters `agent_id`, `action_type`, `since` (inclusive), `until` (exclusive), `label.<key>`; `limit` 1..1000 ' +
    '(default 100), `offset`. Ordered by `index`. `X-Total-Count` gives the number of matches.',
  'GET',
  '/v1/events?agent_id=support-bot&label.env=prod&limit=2',
)
await call('GET /v1/events/:id', '404 for an unknown (or malformed) id.', 'GET', `/v1/events/${first.id}`)
await call(
  'GET /v1/search',
  'Case-insensitive; every term must match; `"quoted phrase"` matches a phrase. Searches agent, type, name, ' +
    'status, label values, error and the text of input/output/metadata.',
  'GET',
  `/v1/search?q=${encodeURIComponent('"card declined" refund')}`,
)
await call('GET /v1/agents', 'Ordered by `agent_id`.', 'GET', '/v1/agents')
await call(
  'GET /v1/stats',
  '`chain_health` is the fraction of agents whose chain verifies (1.0 with no agents). `storage` (embedded store ' +
    'only): how full it is against its enforced capacity; `state` is `ok`, `warning` (from `warning_bytes`) or ' +
    '`full` (appends refused with 507 `storage_full`).',
  'GET',
  '/v1/stats',
)
sections.push('## Integrity\n')
await call(
  'GET /v1/verify?agent_id=',
  'Recomputes every hash of the agent from stored content, and checks that the chain ends exactly at the head the ' +
    'service recorded for it. Invalid form: `{"valid": false, "agent_id", "events_checked", ' +
    '"first_invalid_sequence", "first_invalid_event_id", "reason", "expected", "actual"}`; for `sequence_gap` ' +
    '`expected`/`actual` are sequence numbers, and when the chain stops short of its recorded head (its newest ' +
    'events were removed) `first_invalid_event_id` is `null` and `expected`/`actual` are the recorded and the found ' +
    'head sequence; when it goes past its recorded head (events added outside the service), ' +
    '`first_invalid_event_id` is the first of them and `expected`/`actual` are again the recorded and the found ' +
    'head sequence.',
  'GET',
  '/v1/verify?agent_id=support-bot',
)
await call(
  'GET /v1/verify',
  'Every agent, and the log: when its indexes do not run 0, 1, 2... (an event removed or renumbered outside the ' +
    'service), `valid` is false and the extra member `index_gap: {"expected_index", "actual_index", "event_id"}` ' +
    'names the first place.',
  'GET',
  '/v1/verify',
)
await call('GET /v1/merkle/root', 'RFC 9162 root over every stored event.', 'GET', '/v1/merkle/root')
await call(
  'GET /v1/merkle/proof/:id',
  'Inclusion proof, optionally for an older `tree_size`.',
  'GET',
  `/v1/merkle/proof/${first.id}`,
)
await call(
  'GET /v1/merkle/consistency',
  'RFC 9162 consistency proof between two tree sizes (`second` defaults to the current size). For `first=0` and ' +
    'for `first == second` the proof is `[]` (RFC 9162 defines proofs for `0 < first < second`; ' +
    'docs/verification.md says how to check the two edge cases).',
  'GET',
  '/v1/merkle/consistency?first=1',
)
sections.push('## Timestamping\n')
await call(
  'POST /v1/timestamp',
  'RFC 3161 token over the current root, from the embedded TSA (or `--tsa-url`).',
  'POST',
  '/v1/timestamp',
)
await call('GET /v1/timestamps', 'Oldest first.', 'GET', '/v1/timestamps')
await call(
  'GET /v1/timestamps/verify',
  'The latest timestamp, checked cryptographically and for consistency with the stored events.',
  'GET',
  '/v1/timestamps/verify',
)
await call('GET /v1/timestamps/ca', 'The trust anchor(s), PEM.', 'GET', '/v1/timestamps/ca')
sections.push('## Export\n')
await call(
  'GET /v1/export',
  'The evidence package (`.atrail.json`, see docs/verification.md), with the filters of GET /v1/events (no ' +
    'paging). Shortened here.',
  'GET',
  '/v1/export?agent_id=support-bot',
)
sections.push('## Policy\n')
await call('POST /v1/policy/check', 'Rules of docs/policy.md; 200 whether passed or not.', 'POST', '/v1/policy/check', {
  policies: [
    {name: 'chains intact', type: 'chain_integrity'},
    {name: 'prod events carry env', type: 'required_labels', labels: ['env']},
    {name: 'few failures', type: 'max_failure_rate', max: 0.2},
  ],
})
sections.push(
  "## Agent keys\n\nAgents' public keys, registered and revoked as events of the log's own agent " +
    '`audit-trail:keys`; an agent with a key signs each of its events (docs/signatures.md). PUT and DELETE need ' +
    'the `admin` scope; GET takes a `read` or an `admin` key.\n',
)
// The Ed25519 key of RFC 8037 appendix A.1, whose public part and kid (A.3) are known answers.
const agentKey = {
  kty: 'OKP',
  crv: 'Ed25519',
  d: 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A',
  x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
}
const kid = 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k'
await call(
  'PUT /v1/agents/<agent_id>/keys/<kid>',
  'Registers the public JWK in the body (Ed25519, RFC 8037; or P-256) for the agent; `kid` must be its RFC 7638 ' +
    'thumbprint. 201 with the key and its `KEY_REGISTERED` event; 200 with them when it is registered already; 409 ' +
    "for another agent's kid or a revoked one; 400 for a private key, a kid that is not the thumbprint, or an " +
    '`audit-trail:` agent.',
  'PUT',
  `/v1/agents/payments-bot/keys/${kid}`,
  {kty: agentKey.kty, crv: agentKey.crv, x: agentKey.x},
)
await call(
  'POST /v1/events (signed)',
  "An event of an agent with a key carries `signature`, a detached JWS of the agent's key over the event in " +
    'commitment form, and its own `id`, `timestamp` and `salts` (`signEvent` or `ingest --sign-with` build them).',
  'POST',
  '/v1/events',
  signEvent(
    {
      id: '0193a4b2-7c1d-7e2f-9a3b-4c5d6e7f8093',
      agent_id: 'payments-bot',
      action_type: 'API_CALL',
      action_name: 'payments.refund',
      timestamp: '2026-11-21T09:00:05Z',
      input: {order: 'A-1001'},
    },
    agentKey,
  ),
)
await call(
  'POST /v1/events (invalid signature)',
  'Without a valid signature by a key the agent has at this point of the log: 400 `invalid_signature`, the ' +
    'message naming why (`missing signature`, `no key`, `unknown key`, `revoked key`, `bad signature`); nothing ' +
    'is recorded. In a batch, per element.',
  'POST',
  '/v1/events',
  {agent_id: 'payments-bot', action_type: 'API_CALL', action_name: 'payments.refund'},
)
await call(
  'DELETE /v1/agents/<agent_id>/keys/<kid>',
  'Revokes the key (200 with the key and its `KEY_REVOKED` event; again: 200 with them; 404 for a key the agent ' +
    'does not have). Events after the revocation signed with it are refused; those before stay valid.',
  'DELETE',
  `/v1/agents/payments-bot/keys/${kid}`,
)
await call(
  'GET /v1/agents/<agent_id>/keys',
  "The agent's keys in registration order with the log indexes of their registration and revocation " +
    '(`revoked_index` null while valid); an agent without keys: `[]`.',
  'GET',
  '/v1/agents/payments-bot/keys',
)
sections.push(
  "## Checkpoints and tiles (C2SP)\n\nThe log's signed checkpoints and its tree as C2SP tlog-tiles " +
    '(docs/checkpoints.md). `/tlog/` is outside `/v1/` and served without an API key (docs/security.md); its errors ' +
    'have the usual JSON error body.\n',
)
await call(
  'GET /v1/log/key',
  "The log's origin (`serve --origin`) and its signed-note verifier key `<origin>+<key id hex>+<base64(0x01 || " +
    'Ed25519 public key)>`.',
  'GET',
  '/v1/log/key',
)
await service.services.checkpoints.signIfGrown()
await call(
  'GET /tlog/checkpoint',
  'The latest signed checkpoint (origin, tree size, base64 root) with the witness cosignatures the log holds for ' +
    'it, `text/plain; charset=utf-8`, `Cache-Control: public, max-age=2`. Signed whenever the tree grew, at most ' +
    'once a second.',
  'GET',
  '/tlog/checkpoint',
)
sections.push(
  `### GET /tlog/tile/<L>/<N>[.p/<W>]\n\nA hash tile: W (256 when full) consecutive 32-byte hashes at level L ` +
    `(level 0: leaf hashes; level L: roots of complete subtrees of 256^L leaves), \`application/octet-stream\`, ` +
    `\`Cache-Control: public, max-age=31536000, immutable\`. N is written in three-digit groups with \`x\` prefixes ` +
    `(\`/tlog/tile/0/x001/x234/067\`). 404 (\`not_found\`) for a tile the tree does not hold yet and for a path ` +
    `tlog-tiles does not allow.\n\n\`\`\`sh\ncurl -s '${base}/tlog/tile/0/000.p/3' | od -A d -t x1 | head -2\n` +
    `\`\`\`\n\n### ` +
    `GET /tlog/tile/entries/<N>[.p/<W>]\n\nAn entry bundle: for each of the W leaves from N * 256, the big-endian ` +
    `uint16 \`32\` and the 32 raw bytes of the event \`hash\` (the leaf data). Same type, caching and 404 as hash ` +
    `tiles.\n`,
)
sections.push(await readFile(new URL('./api-docs-scitt.md', import.meta.url), 'utf8'))
sections.push(await readFile(new URL('./api-docs-trails.md', import.meta.url), 'utf8'))
sections.push('## Forwarding\n')
await new Promise((resolve) => setTimeout(resolve, 500))
await call(
  'GET /v1/forwarding',
  'Each `serve --forward` destination, and any other whose position the store holds: its position, lag and ' +
    'last error per trail (docs/forwarding.md). Here a syslog receiver that does not answer.',
  'GET',
  '/v1/forwarding',
)
sections.push('## Other\n')
await call('GET /v1/dashboard/config', 'Which features this server has enabled.', 'GET', '/v1/dashboard/config')
await call(
  'GET /healthz',
  'Never authenticated. `status` is `ok` while the service answers; `storage` is as in GET /v1/stats.',
  'GET',
  '/healthz',
)
await call(
  'POST /v1/traces',
  'OTLP/HTTP (JSON shown; protobuf too), only with `serve --otlp`. See docs/otlp.md.',
  'POST',
  '/v1/traces',
  {
    resourceSpans: [
      {
        resource: {attributes: [{key: 'service.name', value: {stringValue: 'research-agent'}}]},
        scopeSpans: [
          {
            spans: [
              {
                traceId: '5b8efff798038103d269b633813fc60c',
                spanId: 'eee19b7ec3c1b174',
                name: 'execute_tool web_search',
                startTimeUnixNano: '1763715600000000000',
                endTimeUnixNano: '1763715600250000000',
                attributes: [
                  {key: 'gen_ai.operation.name', value: {stringValue: 'execute_tool'}},
                  {key: 'gen_ai.tool.name', value: {stringValue: 'web_search'}},
                ],
              },
            ],
          },
        ],
      },
    ],
  },
)
await call('Errors', 'Every error has this body; see the table above.', 'GET', '/v1/events?limit=5000')
sections.push(
  '## Erasure\n\nPayload members (`input`, `output`, `metadata`, `error`) can be erased while every hash, ' +
    'chain, proof, timestamp and checkpoint still verifies (docs/erasure.md). Scope `erase` with `--api-keys`.\n',
)
await call(
  'POST /v1/erasures',
  'Body: `ids` (1 to 10,000 event ids) or `filter` (the filters of GET /v1/events: `agent_id`, `session_id`, ' +
    '`trace_id`, `action_type`, `since`, `until`, `labels` as an object; at least one), `members` (default all ' +
    'four), `reason` (required, 1..1024 characters), `requested_by` (optional). The erasure is recorded first, as an ' +
    'event of `audit-trail:erasures` (`ERASURE`, `payload.erase`) whose `metadata` names the reason, who asked and ' +
    'what it covers (the ids with their members, or the filter, `before_index` and the `count`); then each covered ' +
    'event loses the members and their salts and names the erasure in `erased`. `skipped` lists the events it took ' +
    'nothing from: `not_found`, `hash_version_1` (recorded before commitments, cannot be erased), ' +
    "`already_erased`, `no_payload` (none of the members), `service_event` (the service's own events). A bad body " +
    'is 400 with nothing recorded.',
  'POST',
  '/v1/erasures',
  {ids: [first.id], members: ['input'], reason: 'GDPR Art. 17 request #4711', requested_by: 'dpo@example.com'},
)
await call(
  'POST /v1/erasures (nothing left to erase)',
  'Erasing again what is erased changes nothing: `200`, no erasure event, every event in `skipped`.',
  'POST',
  '/v1/erasures',
  {ids: [first.id], members: ['input'], reason: 'GDPR Art. 17 request #4711'},
)
await call(
  'GET /v1/events/:id (erased)',
  'The erased member is gone with its salt; its commitment stays.',
  'GET',
  `/v1/events/${first.id}`,
)
await call(
  'GET /v1/export?redact=',
  '`redact`: payload members to leave out of every event (comma-separated); each event lists what it withholds in ' +
    '`redacted`, and the package still verifies. `erasures` carries the erasure events its events name, with ' +
    'their inclusion proofs. Shortened here.',
  'GET',
  '/v1/export?agent_id=support-bot&redact=output',
)

const messages: string[] = []
await new Promise<void>((resolve) => {
  const ws = new WebSocket(`${service.url.replace('http', 'ws')}/v1/stream?from_index=0&agent_id=billing-bot`)
  ws.on('message', (data) => {
    messages.push(JSON.stringify(shorten(JSON.parse(String(data)))))
    if (messages.length === 2) {
      ws.close()
      resolve()
    }
  })
})
sections.push(
  `## Real-time\n\n### GET /v1/stream (WebSocket)\n\nQuery: \`agent_id\`, \`action_type\`, \`from_index\` (replay ` +
    `stored events from that index, then live, with no gap and no duplicate). A client too slow to keep up is ` +
    `closed with code 1013 and resumes with \`from_index\`. A plain GET without the WebSocket upgrade gets \`400\` ` +
    `(\`validation_error\`) saying so; an upgrade to any other path gets \`404\`.\n\n` +
    `<!-- no-run: a stream, open until closed; websocat is no standard tool -->\n\`\`\`sh\nwebsocat ` +
    `'${base.replace('http', 'ws')}` +
    `/v1/stream?from_index=0&agent_id=billing-bot'\n\`\`\`\n\n\`\`\`json\n${messages.join('\n')}\n\`\`\`\n`,
)

await service.close()
await rm(dir, {recursive: true, force: true})

const intro = `# HTTP API

Generated from a real run by \`node --import tsx scripts/api-docs.ts\`; long values are shortened.
All endpoints are under \`/v1/\`, JSON in and out (\`application/json; charset=utf-8\`). With
\`serve --api-keys FILE\`, every endpoint but \`/healthz\` needs \`Authorization: Bearer <key>\`
(\`read\` scope for GET and POST /v1/policy/check, \`erase\` for POST /v1/erasures, \`write\` for the
other POSTs, \`admin\` for PUT and DELETE of agents' keys, whose GET it may also make, \`approve\` for
deciding a held call; docs/security.md has the whole table; \`/v1/stream\` also takes \`?access_token=\`).
The approvals endpoints (\`/v1/approvals\`) are in docs/oversight.md.

A key bound to agents (\`agent=PATTERN[,PATTERN...]\` on its line, docs/security.md) writes and reads only
their events: a write of another agent is \`403\` \`forbidden\` naming it (in a batch that element's result,
status \`403\`, and the response \`207\`; in an OTLP export the span or log record, in \`partial_success\`); lists,
counts (\`X-Total-Count\`, search \`total\`, stats), the stream, export, verify, agents, policy results and
approvals cover its agents only, and another agent's event, proof, receipt, keys or held call is \`404\`.

Errors always have the body \`{"error": {"code", "message", "details"?}}\`:

| code | status |
|---|---|
| \`invalid_json\`, \`validation_error\`, \`invalid_signature\` (docs/signatures.md) | 400 |
| \`unauthorized\` (with \`WWW-Authenticate: Bearer\`) | 401 |
| \`forbidden\` | 403 |
| \`not_found\`, \`trail_not_found\` (an unknown trail, or one the key is not bound to: Trails below) | 404 |
| \`conflict\`, \`trail_sealed\` (an append to a sealed trail) | 409 |
| \`payload_too_large\` (1 MiB per event; 16 MiB or 1000 events per batch) | 413 |
| \`unsupported_media_type\` | 415 |
| \`tsa_unavailable\` | 502 |
| \`storage_full\` (the embedded store reached its capacity: docs/design.md) | 507 |
| \`storage_unavailable\` | 503 |
| \`internal_error\` | 500 |

Request bodies may be sent with \`Content-Encoding\` \`gzip\`, \`deflate\` or \`br\` (the size limits apply
to the decompressed body); a body that does not decompress is \`400\` \`invalid_json\`, another
encoding \`415\`.

A JSON body that gives a member twice in one object, at any depth
(\`{"labels": {"env": "a", "env": "b"}}\`), is \`400\` \`invalid_json\` naming the member's path, \`$\`
being the body: \`the request body has the member $.labels.env twice: ...\`, with \`details\`
\`[{"field": "$.labels.env", "message": "is given twice"}]\`. JSON leaves the meaning of such a body
open and readers differ (JSON.parse keeps the last value, others the first), so an event recorded
from it could show one reader a value its hash never covered; I-JSON (RFC 7493 section 2.3)
forbids it. In \`POST /v1/batch\` only the element that holds the duplicate gets that \`400\` result
(\`$[3].labels.env\`) and the others are recorded. Every JSON body is held to this
(\`POST /v1/policy/check\`; an OTLP/JSON request is refused as a whole, docs/otlp.md), and so are
the files of \`ingest\` (docs/design.md).

`
await writeFile(path.join(root, 'docs', 'api.md'), intro + sections.join('\n'))
console.log('wrote docs/api.md')
