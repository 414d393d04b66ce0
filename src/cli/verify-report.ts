/** The human lines of `verify`: the store's chains, or an evidence package. */
import type {ChainInvalid} from '../core/chain/index.js'
import type {PackageVerification} from '../core/evidence/verify.js'
import type {ReceiptVerification} from '../core/evidence/event-receipt.js'
import type {EventFilter} from '../core/types.js'
import type {DisclosureVerdict} from '../core/erasure/index.js'
import type {ChainVerification} from './client.js'
import {bad, ok, plural} from './output.js'

/** The verdict of GET /v1/verify (one agent or all), then one line per invalid agent. */
export function chainReport(result: ChainVerification): string[] {
  const lines: string[] = []
  const all = 'agents_checked' in result ? result : undefined
  if (result.valid) {
    const of = all ? ` of ${plural(all.agents_checked, 'agent')}` : ''
    lines.push(ok(`valid: ${plural(result.events_checked, 'event')}${of} verified`))
  }
  const invalid: ChainInvalid[] = all ? all.invalid_agents : result.valid ? [] : [result as ChainInvalid]
  for (const agent of invalid) {
    const id = agent.first_invalid_event_id
    const where = id === null ? 'missing: removed after it was recorded' : `event ${id}`
    const what = `${agent.reason} at sequence ${agent.first_invalid_sequence}`
    lines.push(bad(`INVALID: agent ${agent.agent_id}: ${what} (${where})`))
  }
  const gap = all?.index_gap
  if (gap) {
    const skip = `from index ${gap.expected_index} to ${gap.actual_index} (event ${gap.event_id})`
    lines.push(bad(`INVALID: the log skips ${skip}: events were removed or renumbered`))
  }
  return lines
}

/** What `verify --package` checked, or the first failure with what was expected and found. */
export function packageReport(result: PackageVerification): string[] {
  // A package that verifies with a disclosure that does not is not valid, yet has no failure.
  const f = result.failure
  if (f !== undefined) {
    return [
      bad(`INVALID: ${f.message}`),
      ...(f.expected === undefined ? [] : [`  expected ${f.expected}`]),
      ...(f.actual === undefined ? [] : [`  actual   ${f.actual}`]),
    ]
  }
  const counts = `${plural(result.events_checked, 'event')} of ${plural(result.agents, 'agent')}`
  const root = `root ${result.merkle_root} (tree size ${result.tree_size})`
  const lines = [
    ok(`valid: ${counts}, every hash, chain link and inclusion proof checked against ${root}`),
    `selection: ${describeSelection(result.filters)}`,
  ]
  const signed = result.signatures_checked ?? 0
  if (signed > 0) {
    lines.push(ok(`signatures: ${plural(signed, 'event')} signed by a key its agent had at that point of the log`))
  }
  const ts = result.timestamp
  if (ts) {
    const signed = `signed by ${ts.tsa} at ${ts.tsa_time} over tree size ${ts.tree_size}`
    lines.push(ok(`timestamp: valid, ${signed}, consistent with the package tree`))
    if (ts.trust_anchor === 'package') {
      lines.push(
        'note: the TSA certificate came from the package itself; this proves integrity relative to the ' +
          "package's TSA, not the TSA's independence. Pass --tsa-ca with a trust anchor you obtained separately.",
      )
    }
  } else {
    lines.push('timestamp: none in the package')
  }
  lines.push(checkpointLine(result.checkpoint))
  if (result.erasures) {
    lines.push(
      ok(`erasures: ${plural(result.erasures, 'erasure event')} proven in the tree, covering every erased member`),
    )
  }
  if (result.redacted_events) {
    lines.push(`redacted: ${plural(result.redacted_events, 'event')} withhold payload members; their commitments stand`)
  }
  lines.push(receiptsLine(result.receipts))
  return lines
}

function receiptsLine(receipts: PackageVerification['receipts']): string {
  if (!receipts) return 'receipts: none in the package'
  const each = `${plural(receipts.count, 'COSE Receipt')}, each proving its event in the package tree`
  if (!receipts.signature_checked) return `receipts: ${each}; their signatures were not checked (give --log-key)`
  return ok(`receipts: ${each}, signed by the log key${receipts.issuer ? ` of ${receipts.issuer}` : ''}`)
}

/** `verify --receipt`: the event, its leaf and the tree the receipt signs, or why not. */
export function receiptReport(result: ReceiptVerification): string[] {
  if (!result.valid) return [bad(`INVALID: ${result.failure!.message}`)]
  const by = result.issuer ? ` of ${result.issuer}` : ''
  return [
    ok(`valid: event ${result.event_id} is leaf ${result.leaf_index} of the tree of ${result.tree_size} events`),
    `root ${result.root}, signed by the log key${by} (kid ${result.kid})`,
  ]
}

/** One line per disclosure checked against the package (`verify --disclosure`). */
export function disclosureReport(verdicts: readonly DisclosureVerdict[]): string[] {
  if (verdicts.length === 0) return ['disclosure: not checked, the package does not verify']
  return verdicts.map((d) =>
    d.valid ? ok(`disclosure: ${d.message} ${d.commitment}`) : bad(`INVALID disclosure: ${d.message}`),
  )
}

function checkpointLine(checkpoint: PackageVerification['checkpoint']): string {
  if (!checkpoint) return 'checkpoint: none in the package'
  const where = `${checkpoint.origin} at tree size ${checkpoint.tree_size}`
  if (!checkpoint.signature_checked) {
    return `checkpoint: ${where}, consistent with the package tree; its signatures were not checked (give --log-key)`
  }
  const names = checkpoint.witnesses.join(', ')
  const cosigned = checkpoint.witnesses.length === 0 ? 'no cosignature of a given witness' : `cosigned by ${names}`
  return ok(`checkpoint: signed by the log key of ${where}, ${cosigned}, consistent with the package tree`)
}

/** The package's `filters` in words, for the reader to compare with the selection asked for. */
function describeSelection(filters: EventFilter): string {
  const parts = [
    filters.agent_id !== undefined && `agent_id = ${filters.agent_id}`,
    filters.agents !== undefined && `agent_id matching ${filters.agents.join(' or ')}`,
    filters.action_type !== undefined && `action_type = ${filters.action_type}`,
    filters.trace_id !== undefined && `trace_id = ${filters.trace_id}`,
    filters.session_id !== undefined && `session_id = ${filters.session_id}`,
    filters.since !== undefined && `timestamp >= ${filters.since}`,
    filters.until !== undefined && `timestamp < ${filters.until}`,
    ...Object.entries(filters.labels ?? {}).map(([key, value]) => `label ${key} = ${value}`),
  ].filter((part): part is string => typeof part === 'string')
  if (parts.length === 0) return 'every event of the tree (no filter), checked to be complete'
  if (parts.length === 1 && filters.agent_id !== undefined) {
    return `${parts[0]}, the agent's whole chain up to the tree size, checked to be complete`
  }
  const byAgentOnly = parts.length === (filters.agent_id === undefined ? 1 : 2)
  if (filters.agents !== undefined && byAgentOnly) {
    return `${parts.join(', ')}, each agent's whole chain up to the tree size, checked to be complete`
  }
  return `${parts.join(', ')} (every event checked to be inside it; that none is missing cannot be checked)`
}
