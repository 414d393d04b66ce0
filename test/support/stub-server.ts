/** Loopback stand-ins for a server a CLI command talks to: one that always answers the same, and none. */
import * as http from 'node:http'
import type {AddressInfo} from 'node:net'

/**
 * A server that answers every request, upgrades (the event stream) included, with `status` and
 * `body`, as a failing audit-trail would.
 */
export async function answering(status: number, body: string): Promise<{url: string; close(): Promise<void>}> {
  const head = `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}`
  const server = http.createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(status, {'content-type': 'application/json; charset=utf-8'}).end(body))
  })
  server.on('upgrade', (_request, socket) => socket.end(`HTTP/1.1 ${status} Refused\r\n${head}\r\n\r\n${body}`))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** A loopback port nothing listens on: one that was free a moment ago. */
export async function closedPort(): Promise<number> {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/** The error body audit-trail answers with. */
export const apiError = (code: string, message: string): string => JSON.stringify({error: {code, message}})
