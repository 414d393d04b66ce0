/**
 * Syslog over TCP (RFC 6587) and TLS (RFC 5425): one connection kept open and made again after any
 * failure. A batch counts as sent once the socket has handed all of its bytes to the operating
 * system; plain syslog has no acknowledgement (docs/forwarding.md says what that means).
 */
import * as net from 'node:net'
import {hostname} from 'node:os'
import * as tls from 'node:tls'
import type {StoredEvent} from '../../core/types.js'
import {ForwardingError} from './errors.js'
import {SEND_TIMEOUT_MS, type Sender} from './sender.js'
import {octetCounted, syslogMessage} from './syslog-message.js'

/** How long a new connection must stay up before a batch is written to it. */
const SETTLE_MS = 200

export interface SyslogTarget {
  host: string
  port: number
  tls: boolean
  /** PEM CA certificate(s) the receiver's certificate must chain to (default: Node.js' roots). */
  ca?: string
  /** PEM client certificate and key, for a receiver that asks for one (RFC 5425 5.3). */
  cert?: string
  key?: string
}

export class SyslogSender implements Sender {
  #socket: net.Socket | undefined
  readonly #hostname = hostname()

  constructor(private readonly target: SyslogTarget) {}

  async send(events: readonly StoredEvent[], trail: string): Promise<void> {
    const frames = Buffer.concat(events.map((event) => octetCounted(syslogMessage(event, trail, this.#hostname))))
    const socket = this.#socket ?? (this.#socket = await this.#connect())
    try {
      await withTimeout(
        new Promise<void>((resolve, reject) => {
          socket.write(frames, (error) => (error ? reject(error) : resolve()))
        }),
        'writing',
      )
      if (socket.destroyed) throw new Error('the receiver closed the connection')
    } catch (error) {
      this.#drop()
      throw new ForwardingError('not_delivered', `syslog: ${(error as Error).message}`, {cause: error})
    }
  }

  async close(): Promise<void> {
    const socket = this.#socket
    this.#socket = undefined
    if (!socket) return
    await new Promise<void>((resolve) => socket.end(resolve))
    socket.destroy()
  }

  async #connect(): Promise<net.Socket> {
    const {host, port} = this.target
    const socket = this.target.tls
      ? tls.connect({
          host,
          port,
          ca: this.target.ca,
          cert: this.target.cert,
          key: this.target.key,
          // RFC 6066 3: server_name is a DNS name, never an address.
          servername: net.isIP(host) ? undefined : host,
        })
      : net.connect({host, port})
    // Errors after connecting are seen by the next write; the socket is made again then.
    socket.on('error', () => undefined)
    socket.on('close', () => {
      if (this.#socket === socket) this.#socket = undefined
    })
    try {
      await withTimeout(
        new Promise<void>((resolve, reject) => {
          socket.once(this.target.tls ? 'secureConnect' : 'connect', resolve)
          socket.once('error', reject)
        }),
        'connecting',
      )
    } catch (error) {
      socket.destroy()
      throw new ForwardingError(
        'not_delivered',
        `syslog: cannot connect to ${host}:${port}: ${(error as Error).message}`,
        {
          cause: error,
        },
      )
    }
    // Anything the receiver sends back is not part of the protocol; it is read and let go.
    socket.resume()
    await this.#settled(socket)
    return socket
  }

  /**
   * Syslog has no acknowledgement, so a receiver that refuses a connection after accepting it (a
   * client certificate it does not trust is refused after the TLS 1.3 handshake, RFC 8446 4.4.2.4)
   * would take the first batch into the void. The connection is used once it stayed up a moment.
   */
  async #settled(socket: net.Socket): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const refused = (error?: Error) => {
        clearTimeout(timer)
        reject(
          new ForwardingError(
            'not_delivered',
            `syslog: the receiver closed the connection at once${error ? `: ${error.message}` : ''}`,
          ),
        )
      }
      const timer = setTimeout(() => {
        socket.off('close', refused)
        socket.off('error', refused)
        resolve()
      }, SETTLE_MS)
      socket.once('close', refused)
      socket.once('error', refused)
    })
  }

  #drop(): void {
    this.#socket?.destroy()
    this.#socket = undefined
  }
}

async function withTimeout<T>(promise: Promise<T>, doing: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no progress ${doing} for ${SEND_TIMEOUT_MS / 1000} s`)), SEND_TIMEOUT_MS)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
