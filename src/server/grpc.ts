/**
 * OTLP/gRPC (OTLP specification, "OTLP/gRPC"): the TraceService and LogsService `Export` methods
 * on their own port (`serve --otlp-grpc-port`), through @grpc/grpc-js. Messages pass through
 * grpc-js as bytes and are decoded by the same protobuf code and mapping as OTLP/HTTP
 * (src/services/otlp), so the two transports cannot differ. Keys are checked as for HTTP, from
 * the `authorization` metadata (`Bearer <key>`, write scope); the `trail` metadata names the trail.
 */
import {Server, ServerCredentials, logVerbosity, setLogVerbosity, status} from '@grpc/grpc-js'
import type {Metadata, ServerUnaryCall, ServiceDefinition, sendUnaryData} from '@grpc/grpc-js'
import {agentScopeOfKey} from '../core/auth/agent-scope.js'
import type {ApiKey} from '../core/auth/keys.js'
import {AuditError} from '../core/errors.js'
import type {AgentDirectory} from '../core/otlp/agents.js'
import {OTLP_MAX_BODY_BYTES} from '../services/otlp/body.js'
import {
  recordLogRecords,
  recordSpans,
  scopedRecorder,
  type RecordOutcome,
  type ScopedRecorderSource,
  type SpanEventRecorder,
} from '../services/otlp/export.js'
import {
  decodeProtobufLogsRequest,
  decodeProtobufTraceRequest,
  encodeProtobufLogsResponse,
  encodeProtobufTraceResponse,
} from '../services/otlp/protobuf.js'
import {authorize, bearer} from './middleware/auth.js'
import {ListenError} from './server.js'

/** Where a call's spans go: the trail its `trail` metadata names (else the key's, else `default`). */
export type GrpcTrails = (
  named: string | undefined,
  key: ApiKey | undefined,
) => Promise<{recorder: ScopedRecorderSource; agents: AgentDirectory}>

interface OtlpGrpcOptions {
  host: string
  port: number
  trails: GrpcTrails
  apiKeys?: readonly ApiKey[]
  /** Failures that are the service's own (500 over HTTP), for the operator's log. */
  logError?: (error: unknown) => void
}

export interface RunningGrpc {
  port: number
  close(): Promise<void>
}

/** The service's error codes as gRPC statuses (OTLP/gRPC "Failures": which ones a client retries). */
const GRPC_STATUS: Readonly<Record<string, status>> = {
  invalid_json: status.INVALID_ARGUMENT,
  validation_error: status.INVALID_ARGUMENT,
  unsupported_media_type: status.INVALID_ARGUMENT,
  unauthorized: status.UNAUTHENTICATED,
  forbidden: status.PERMISSION_DENIED,
  payload_too_large: status.RESOURCE_EXHAUSTED,
  // Not retried without RetryInfo, as OTLP/gRPC says: the store stays full until an operator acts.
  storage_full: status.RESOURCE_EXHAUSTED,
  trail_not_found: status.NOT_FOUND,
  // A sealed trail takes no more events (docs/trails.md): retrying cannot help.
  trail_sealed: status.FAILED_PRECONDITION,
  // Retryable: the journal may be writable again on the next attempt.
  storage_unavailable: status.UNAVAILABLE,
}

/** How long a shutdown waits for calls in progress before it closes their connections. */
const SHUTDOWN_GRACE_MS = 5000

const bytes = (buffer: Buffer): Buffer => buffer

function unaryMethod(path: string): ServiceDefinition[string] {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: bytes,
    requestDeserialize: bytes,
    responseSerialize: bytes,
    responseDeserialize: bytes,
  }
}

/** The OTLP collector services with bodies as bytes, for the server and for a client that sends encoded bodies. */
export const TRACE_SERVICE: ServiceDefinition = {
  Export: unaryMethod('/opentelemetry.proto.collector.trace.v1.TraceService/Export'),
}
const LOGS_SERVICE: ServiceDefinition = {
  Export: unaryMethod('/opentelemetry.proto.collector.logs.v1.LogsService/Export'),
}

/** The one `authorization` value; two are refused, as over HTTP a repeated header would be ambiguous. */
function presentedKey(metadata: Metadata): string | undefined {
  const values = metadata.get('authorization')
  if (values.length > 1) throw new AuditError('unauthorized', 'send one authorization metadata value, not several')
  return values.length === 1 ? bearer(String(values[0])) : undefined
}

/**
 * The `trail` metadata entry: the trail a call records into (docs/otlp.md, "Trails"), as the path
 * prefix /v1/trails/NAME/ does over HTTP.
 */
function namedTrail(metadata: Metadata): string | undefined {
  const values = metadata.get(TRAIL_METADATA)
  if (values.length > 1) throw new AuditError('validation_error', `send one ${TRAIL_METADATA} metadata value`)
  return values.length === 1 ? String(values[0]) : undefined
}

export const TRAIL_METADATA = 'trail'

type Recording = (body: Buffer, trail: {recorder: SpanEventRecorder; agents: AgentDirectory}) => Promise<Buffer>

function handler(
  options: OtlpGrpcOptions,
  record: Recording,
): (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => void {
  return (call, callback) => {
    void (async () => {
      const key = options.apiKeys && authorize(options.apiKeys, presentedKey(call.metadata), 'write')
      const trail = await options.trails(namedTrail(call.metadata), key)
      // A key bound to agents records only theirs (docs/security.md).
      const scope = key === undefined ? undefined : agentScopeOfKey(key)
      return record(call.request, {...trail, recorder: scopedRecorder(trail.recorder, scope)})
    })().then(
      (response) => callback(null, response),
      (error: unknown) => {
        const code = error instanceof AuditError ? GRPC_STATUS[error.code] : undefined
        if (code === undefined) options.logError?.(error)
        const details = error instanceof AuditError && code !== undefined ? error.message : 'internal error'
        callback({code: code ?? status.INTERNAL, details})
      },
    )
  }
}

function partial(outcome: RecordOutcome): {rejected: number; errorMessage: string} | undefined {
  return outcome.rejected > 0 ? {rejected: outcome.rejected, errorMessage: outcome.errorMessage ?? ''} : undefined
}

/** Starts the OTLP/gRPC receiver; rejects when the address cannot be bound. */
export async function startOtlpGrpc(options: OtlpGrpcOptions): Promise<RunningGrpc> {
  // grpc-js would print its own lines to stderr; what goes wrong is said once, by the service.
  setLogVerbosity(logVerbosity.NONE)
  // The OTLP specification's 20 MiB, as for OTLP/HTTP; grpc-js answers RESOURCE_EXHAUSTED past it.
  const server = new Server({'grpc.max_receive_message_length': OTLP_MAX_BODY_BYTES})
  server.addService(TRACE_SERVICE, {
    Export: handler(options, async (body, {recorder, agents}) => {
      const outcome = await recordSpans(decodeProtobufTraceRequest(body).spans, recorder, agents)
      const rejected = partial(outcome)
      const partialSuccess = rejected && {rejectedSpans: rejected.rejected, errorMessage: rejected.errorMessage}
      return Buffer.from(encodeProtobufTraceResponse(partialSuccess))
    }),
  })
  server.addService(LOGS_SERVICE, {
    Export: handler(options, async (body, {recorder, agents}) => {
      const outcome = await recordLogRecords(decodeProtobufLogsRequest(body), recorder, agents)
      const rejected = partial(outcome)
      const partialSuccess = rejected && {rejectedLogRecords: rejected.rejected, errorMessage: rejected.errorMessage}
      return Buffer.from(encodeProtobufLogsResponse(partialSuccess))
    }),
  })
  // An IPv6 literal needs brackets in a gRPC target.
  const address = options.host.includes(':') ? `[${options.host}]:${options.port}` : `${options.host}:${options.port}`
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (error, bound) => {
      const problem = `cannot serve OTLP/gRPC on ${address} (${error?.message}); choose another --otlp-grpc-port`
      if (error) reject(new ListenError('cannot_listen', problem))
      else resolve(bound)
    })
  })
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        // Calls in progress may finish; a client that holds its connection open does not hold up a shutdown.
        const force = setTimeout(() => {
          server.forceShutdown()
          resolve()
        }, SHUTDOWN_GRACE_MS)
        server.tryShutdown(() => {
          clearTimeout(force)
          resolve()
        })
      }),
  }
}
