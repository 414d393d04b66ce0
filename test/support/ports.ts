/**
 * Loopback ports for servers a test stops and starts again on the same port (a log that goes away,
 * rsyslogd, a PostgreSQL cluster). They come from below the kernel's ephemeral range: a port of that
 * range, once let go, may be taken by any outgoing connection or `listen(0)` of another test file
 * running at the same time. From 12,000 up: the docs' recipes listen on fixed ports below.
 */
import {readFileSync} from 'node:fs'
import net from 'node:net'

const LOWEST = 12_000

/** The first port of the kernel's ephemeral range (Linux), or the usual one elsewhere. */
function ephemeralStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
  } catch {
    return 32_768
  }
}

/** Binds `server` to `port` on 127.0.0.1; the port it got. */
export function listenOn(server: net.Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject)
      resolve((server.address() as net.AddressInfo).port)
    })
  })
}

/**
 * Binds `server` to a free port below the ephemeral range; an ephemeral one where the range starts
 * too low to leave room.
 */
export async function listenOutsideEphemeral(server: net.Server): Promise<number> {
  const end = ephemeralStart()
  for (let attempt = 0; end > LOWEST + 2000 && attempt < 50; attempt++) {
    try {
      return await listenOn(server, LOWEST + Math.floor(Math.random() * (end - LOWEST)))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error
    }
  }
  return listenOn(server, 0)
}

/** A port nothing listens on right now, below the ephemeral range, for a process to bind. */
export async function freePort(): Promise<number> {
  const probe = net.createServer()
  const port = await listenOutsideEphemeral(probe)
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}
