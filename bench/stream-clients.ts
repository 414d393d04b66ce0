/**
 * `node --import tsx bench/stream-clients.ts URL CLIENTS EVENTS [--slow]`: the subscriber side of
 * the stream benchmark, in a process of its own so that the server's process measures only the
 * server. Opens CLIENTS WebSocket subscribers, prints `ready`, counts event messages until every
 * client has EVENTS of them (or 120 s pass), samples the lag of one event in 50 per client
 * (receipt time minus the event's recorded_at), then prints a JSON summary. `--slow` instead opens
 * one subscriber that does not read (a stuck consumer) until a line arrives on its standard
 * input, and then prints the code with which the server closed it.
 */
import WebSocket from 'ws'

const [url, clientsText, eventsText] = process.argv.slice(2)
const clients = Number(clientsText)
const events = Number(eventsText)

if (process.argv.includes('--slow')) {
  const ws = new WebSocket(url!)
  const socket = () => (ws as unknown as {_socket: {pause(): void; resume(): void}})._socket
  ws.once('open', () => {
    socket().pause()
    process.stdout.write('ready\n')
  })
  // Told to, it reads again: then it sees what the server did with it meanwhile.
  process.stdin.once('data', () => socket().resume())
  ws.once('close', (code) => {
    process.stdout.write(`${JSON.stringify({closed: code})}\n`)
    process.exit(0)
  })
  setTimeout(() => process.exit(0), 300_000).unref()
} else {
  const lags: number[] = []
  let received = 0
  let open = 0
  const expected = clients * events
  const started = Date.now()
  const finish = () => {
    lags.sort((a, b) => a - b)
    const at = (q: number) => lags[Math.min(lags.length - 1, Math.floor(lags.length * q))] ?? null
    const seconds = (Date.now() - started) / 1000
    process.stdout.write(`${JSON.stringify({received, expected, p50: at(0.5), p99: at(0.99), max: at(1), seconds})}\n`)
    process.exit(0)
  }
  for (let c = 0; c < clients; c++) {
    const ws = new WebSocket(url!)
    let mine = 0
    ws.on('message', (data: Buffer) => {
      // Event messages start with {"type":"event"; skip the hello and timestamps without parsing.
      if (data[9] !== 0x65) return
      received++
      if (++mine % 50 === 0) {
        const recordedAt = /"recorded_at":"([^"]+)"/.exec(data.toString())?.[1]
        if (recordedAt) lags.push(Date.now() - Date.parse(recordedAt))
      }
      if (received === expected) finish()
    })
    ws.once('open', () => {
      if (++open === clients) process.stdout.write('ready\n')
    })
    ws.once('error', (error) => {
      process.stderr.write(`client error: ${error.message}\n`)
      process.exit(1)
    })
  }
  setTimeout(finish, 120_000).unref()
}
