/**
 * One http.Server for the Koa app (and, later in its life, the WebSocket stream), bound and
 * closed gracefully: in-flight requests finish, then the services snapshot and release the lock.
 */
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import type {Socket} from 'node:net'
import type {Duplex} from 'node:stream'
import type Koa from 'koa'
import {AuditError} from '../core/errors.js'
import {CodedError} from '../core/coded-error.js'

interface RunningServer {
  server: http.Server
  url: string
  close(): Promise<void>
}

/** Why the service cannot listen: `serve` says so and exits 2, naming the flag to change. */
export type ListenErrorCode =
  /** The port is taken (EADDRINUSE). */
  | 'address_in_use'
  /** The process may not bind that port (EACCES: below 1024 without the privilege). */
  | 'not_permitted'
  /** Anything else: an address not of this host, an OTLP/gRPC port that cannot be bound. */
  | 'cannot_listen'

export class ListenError extends CodedError<ListenErrorCode> {
  override name = 'ListenError'
}

export interface ConnectionLimits {
  /** A client must send its request headers within this (default 10 s). */
  headersTimeoutMs?: number
  /** A client must send its whole request within this (default 60 s). */
  requestTimeoutMs?: number
  /** Connections beyond this are refused (default 10,000). */
  maxConnections?: number
}

/**
 * Requests that Node's HTTP parser refuses before Koa sees them (a request head over Node's
 * 16 KiB, a malformed request line or header, a request not received in time) get the API's
 * error body too (docs/api.md: errors always have it), with the status Node gives them: 431,
 * 400 or 408. Node answers these with an empty body when nobody listens for clientError.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node's own handler: nothing is written once the connection has carried a response.
  if (!socket.writable || error.code === 'ECONNRESET' || ((socket as Socket).bytesWritten ?? 0) > 0) {
    socket.destroy()
    return
  }
  const [status, reason, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ([
          431,
          'Request Header Fields Too Large',
          'payload_too_large',
          'the request line and headers are larger than 16 KiB',
        ] as const)
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ([408, 'Request Timeout', 'validation_error', 'the request was not received in time'] as const)
        : ([400, 'Bad Request', 'validation_error', 'the request is not valid HTTP/1.1'] as const)
  const body = JSON.stringify(new AuditError(code, message).toBody())
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}

export async function listen(
  app: Koa,
  host: string,
  port: number,
  limits: ConnectionLimits = {},
): Promise<RunningServer> {
  const headersTimeout = limits.headersTimeoutMs ?? 10_000
  // Node checks the timeouts below at this interval (30 s by default, longer than they are).
  const server = http.createServer({connectionsCheckingInterval: Math.min(1000, headersTimeout / 2)}, app.callback())
  // Bounds against slow or abusive clients (issue 8), so none can hold the server's sockets forever.
  server.headersTimeout = headersTimeout
  server.requestTimeout = limits.requestTimeoutMs ?? 60_000
  server.keepAliveTimeout = 5_000
  server.maxConnections = limits.maxConnections ?? 10_000
  server.on('clientError', answerClientError)
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new ListenError('address_in_use', `port ${port} on ${host} is already in use; choose another with --port`)
          : error.code === 'EACCES'
            ? new ListenError(
                'not_permitted',
                `not allowed to listen on ${host}:${port}; choose a port above 1023 with --port`,
              )
            : new ListenError(
                'cannot_listen',
                `cannot listen on ${host}:${port}: ${error.message}; check --host and --port`,
              ),
      )
    })
    server.listen(port, host, () => resolve())
  })
  const address = server.address() as AddressInfo
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
      }),
  }
}
