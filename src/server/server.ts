/**
 * One http.Server for the Koa app (and, later in its life, the WebSocket stream), bound and
 * closed gracefully: in-flight requests finish, then the services snapshot and release the lock.
 */
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import type Koa from 'koa'

export interface RunningServer {
  server: http.Server
  url: string
  close(): Promise<void>
}

export class ListenError extends Error {}

export interface ConnectionLimits {
  /** A client must send its request headers within this (default 10 s). */
  headersTimeoutMs?: number
  /** A client must send its whole request within this (default 60 s). */
  requestTimeoutMs?: number
  /** Connections beyond this are refused (default 10,000). */
  maxConnections?: number
}

export async function listen(app: Koa, host: string, port: number, limits: ConnectionLimits = {}): Promise<RunningServer> {
  const headersTimeout = limits.headersTimeoutMs ?? 10_000
  // Node checks the timeouts below at this interval (30 s by default, longer than they are).
  const server = http.createServer({connectionsCheckingInterval: Math.min(1000, headersTimeout / 2)}, app.callback())
  // Bounds against slow or abusive clients (issue 8), so none can hold the server's sockets forever.
  server.headersTimeout = headersTimeout
  server.requestTimeout = limits.requestTimeoutMs ?? 60_000
  server.keepAliveTimeout = 5_000
  server.maxConnections = limits.maxConnections ?? 10_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(new ListenError(
        error.code === 'EADDRINUSE' ? `port ${port} on ${host} is already in use; choose another with --port`
          : error.code === 'EACCES' ? `not allowed to listen on ${host}:${port}`
            : `cannot listen on ${host}:${port}: ${error.message}`,
      ))
    })
    server.listen(port, host, () => resolve())
  })
  const address = server.address() as AddressInfo
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeIdleConnections()
    }),
  }
}
