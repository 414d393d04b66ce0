/**
 * The OpenTelemetry semantic conventions for generative AI (`open-telemetry/semantic-conventions-genai`,
 * Development status) as event fields: the operation as `action_type`, the named attributes an
 * auditor filters and writes policies on as labels, tool arguments and results and message content
 * as `input`/`output`. Older names (`gen_ai.system`, the `prompt_tokens` usage names) are read too.
 * The table is in docs/otlp.md.
 */
import type {Json} from '../types.js'
import type {AttributeMap} from './span.js'

/** `gen_ai.operation.name` -> `action_type`; any other operation (or none) is `SPAN`. */
export const ACTION_TYPES: Readonly<Record<string, string>> = {
  invoke_agent: 'AGENT_ACTION',
  invoke_workflow: 'AGENT_ACTION',
  create_agent: 'AGENT_ACTION',
  execute_tool: 'TOOL_CALL',
  chat: 'LLM_CALL',
  text_completion: 'LLM_CALL',
  generate_content: 'LLM_CALL',
  embeddings: 'LLM_CALL',
  retrieval: 'DATA_ACCESS',
  plan: 'DECISION',
  // Names of OpenLLMetry's `llm.request.type`, which instrumentations sent before the conventions.
  completion: 'LLM_CALL',
  embedding: 'LLM_CALL',
}

/** Label key -> the attributes it is read from, the current name first (usage, provider renamed). */
const NAMED_FIELDS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['gen_ai.operation.name', ['gen_ai.operation.name', 'llm.request.type']],
  ['gen_ai.provider.name', ['gen_ai.provider.name', 'gen_ai.system']],
  ['gen_ai.request.model', ['gen_ai.request.model']],
  ['gen_ai.response.model', ['gen_ai.response.model']],
  ['gen_ai.agent.name', ['gen_ai.agent.name']],
  ['gen_ai.agent.id', ['gen_ai.agent.id']],
  ['gen_ai.tool.name', ['gen_ai.tool.name']],
  ['gen_ai.tool.type', ['gen_ai.tool.type']],
  ['gen_ai.tool.call.id', ['gen_ai.tool.call.id']],
  ['gen_ai.conversation.id', ['gen_ai.conversation.id']],
  ['gen_ai.usage.input_tokens', ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens']],
  ['gen_ai.usage.output_tokens', ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens']],
  ['gen_ai.usage.cache_read.input_tokens', ['gen_ai.usage.cache_read.input_tokens']],
  ['gen_ai.usage.reasoning.output_tokens', ['gen_ai.usage.reasoning.output_tokens']],
]

/** Where `input` and `output` come from, first present wins: tool calls, then message content. */
const INPUT_ATTRIBUTES = ['gen_ai.tool.call.arguments', 'gen_ai.input.messages', 'gen_ai.prompt']
const OUTPUT_ATTRIBUTES = ['gen_ai.tool.call.result', 'gen_ai.output.messages', 'gen_ai.completion']

/** Session: the GenAI conversation, else the general `session.id` convention. */
const SESSION_ATTRIBUTES = ['gen_ai.conversation.id', 'session.id']

/** The first candidate that is a non-empty string. */
export function firstText(...candidates: Array<Json | undefined>): string | undefined {
  return candidates.find((value): value is string => typeof value === 'string' && value.length > 0)
}

/** An attribute's value; a key such as `constructor` is an attribute only when sent. */
function own(attributes: AttributeMap, name: string): Json | undefined {
  return Object.hasOwn(attributes, name) ? attributes[name] : undefined
}

/** A scalar attribute as label text: strings as they are, numbers and booleans written out. */
function scalarText(value: Json | undefined): string | undefined {
  if (typeof value === 'string') return value.length > 0 ? value : undefined
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return undefined
}

/** The operation named by the attributes, current name first. */
export function operationOf(attributes: AttributeMap): string | undefined {
  return firstText(attributes['gen_ai.operation.name'], attributes['llm.request.type'])
}

export function actionTypeOf(operation: string | undefined, fallback: string): string {
  return operation !== undefined && Object.hasOwn(ACTION_TYPES, operation) ? ACTION_TYPES[operation]! : fallback
}

/** The named GenAI fields present, as label key -> text (each label value at most `maxValue` long). */
export function genAiLabels(attributes: AttributeMap, cut: (text: string) => string): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const [label, sources] of NAMED_FIELDS) {
    const text = sources.map((name) => scalarText(own(attributes, name))).find((found) => found !== undefined)
    if (text !== undefined) labels[label] = cut(text)
  }
  return labels
}

function firstPresent(attributes: AttributeMap, names: readonly string[]): Json | undefined {
  const name = names.find((candidate) => Object.hasOwn(attributes, candidate) && attributes[candidate] !== null)
  return name === undefined ? undefined : attributes[name]
}

/** `input`, `output` and `session_id` of the event, each only when the attributes carry one. */
export function contentFields(attributes: AttributeMap): {input?: Json; output?: Json; session?: string} {
  const fields: {input?: Json; output?: Json; session?: string} = {}
  const input = firstPresent(attributes, INPUT_ATTRIBUTES)
  const output = firstPresent(attributes, OUTPUT_ATTRIBUTES)
  const session = firstText(...SESSION_ATTRIBUTES.map((name) => own(attributes, name)))
  if (input !== undefined) fields.input = input
  if (output !== undefined) fields.output = output
  if (session !== undefined) fields.session = session
  return fields
}
