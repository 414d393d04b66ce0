import {expect} from 'chai'
import fc from 'fast-check'
import {LineFramer, type OversizedLine} from '../../../src/mcp/transport/line-framer.js'
import {MemberScanner} from '../../../src/mcp/transport/member-scanner.js'
import {SseReader} from '../../../src/mcp/transport/sse-reader.js'

/** Feeds `bytes` to a scanner in pieces cut at `cuts` (positions), as a stream would deliver them. */
function scan(bytes: Buffer, cuts: number[] = []): MemberScanner {
  const scanner = new MemberScanner()
  let at = 0
  for (const cut of [...cuts.filter((c) => c > 0 && c < bytes.length)].sort((a, b) => a - b)) {
    scanner.push(bytes.subarray(at, cut))
    at = cut
  }
  scanner.push(bytes.subarray(at))
  return scanner
}

describe('MemberScanner (top-level id and method of a streamed object)', () => {
  it('finds an id that comes after a large, nested result full of quotes, braces and escapes', () => {
    const result = {text: 'a "quoted" {brace} [bracket], comma: \\ back\\slash \u00e9 🌍', nested: [{id: 'inner'}]}
    const text = `{"jsonrpc":"2.0","result":${JSON.stringify(Array(2000).fill(result))},"id":"call-7"}`
    const found = scan(Buffer.from(text), [1, 17, 4096, 9999]).found
    expect(found).to.deep.equal({id: 'call-7'})
  })

  it('finds method and id of a request, and notes an error member', () => {
    expect(scan(Buffer.from('{ "id" : 12 , "method":"tools/call","params":{"id":99}}')).found).to.deep.equal({
      id: 12,
      method: 'tools/call',
    })
    expect(scan(Buffer.from('{"jsonrpc":"2.0","error":{"code":1,"message":"x"},"id":null}')).found).to.deep.equal({
      id: null,
      error: true,
    })
  })

  it('ignores ids inside nested values and inside strings', () => {
    const found = scan(Buffer.from('{"result":{"id":1,"method":"x"},"note":"\\"id\\":2"}')).found
    expect(found).to.deep.equal({})
  })

  it('agrees with JSON.parse on the top-level id and method of any object, however it is cut', () => {
    const id = fc.oneof(fc.string(), fc.integer(), fc.constant(null))
    const object = fc.record(
      {id, method: fc.string(), params: fc.jsonValue(), result: fc.jsonValue()},
      {requiredKeys: []},
    )
    fc.assert(
      fc.property(object, fc.array(fc.nat(400)), (value, cuts) => {
        const bytes = Buffer.from(JSON.stringify(value, null, cuts.length % 2 === 0 ? undefined : 1))
        const found = scan(bytes, cuts).found
        expect(found.id).to.deep.equal(value.id)
        expect(found.method).to.equal(value.method)
      }),
      {numRuns: 300},
    )
  })
})

describe('LineFramer (newline-delimited JSON-RPC)', () => {
  function frame(chunks: Array<string | Buffer>, maxBytes = 1024) {
    const lines: string[] = []
    const oversized: OversizedLine[] = []
    const framer = new LineFramer({
      maxBytes,
      onLine: (line) => lines.push(line.toString('utf8')),
      onOversized: (line) => oversized.push(line),
    })
    for (const chunk of chunks) framer.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))
    framer.end()
    return {lines, oversized}
  }

  it('hands on each line with its own terminator, across chunks and with \\r\\n kept', () => {
    const {lines} = frame(['{"a":1}\n{"b"', ':2}\r\n\n', '{"c":3}\n{"d":4}'])
    expect(lines).to.deep.equal(['{"a":1}\n', '{"b":2}\r\n', '\n', '{"c":3}\n', '{"d":4}'])
  })

  it('keeps a multi-byte character split between chunks intact', () => {
    const bytes = Buffer.from('{"t":"🌍"}\n')
    const {lines} = frame([bytes.subarray(0, 8), bytes.subarray(8)])
    expect(lines).to.deep.equal(['{"t":"🌍"}\n'])
  })

  it('drops a line longer than the limit, keeping its size and id, and goes on with the next', () => {
    const big = `{"jsonrpc":"2.0","result":{"text":"${'x'.repeat(5000)}"},"id":41}\n`
    const {lines, oversized} = frame([big.slice(0, 100), big.slice(100, 3000), `${big.slice(3000)}{"next":1}\n`])
    expect(oversized).to.deep.equal([{bytes: big.length - 1, id: 41}])
    expect(lines).to.deep.equal(['{"next":1}\n'])
  })

  it('counts a line exactly at the limit as relayable', () => {
    const line = `{"t":"${'y'.repeat(1016)}"}`
    expect(line.length).to.equal(1024)
    expect(frame([`${line}\n`]).lines).to.deep.equal([`${line}\n`])
    expect(frame([`${line} \n`]).oversized).to.have.length(1)
  })
})

describe('SseReader (the data of Server-Sent Events)', () => {
  function read(chunks: string[], maxBytes = 1024) {
    const data: string[] = []
    const oversized: Array<{bytes: number; id?: unknown}> = []
    const reader = new SseReader({maxBytes, onData: (d) => data.push(d), onOversized: (e) => oversized.push(e)})
    for (const chunk of chunks) reader.push(Buffer.from(chunk))
    return {data, oversized}
  }

  it('joins data lines, skips comments and other fields, and accepts every line ending', () => {
    const {data} = read([
      ': ping\n\nid: 1\nevent: message\ndata: {"a":\r',
      '\ndata: 1}\r\n\r\n',
      'data:{"b":2}\r\rdata: \n\n',
    ])
    expect(data).to.deep.equal(['{"a":\n1}', '{"b":2}'])
  })

  it('reports an event whose data passes the limit by size and id, then reads the next one', () => {
    const long = 'z'.repeat(3000)
    const message = `{"jsonrpc":"2.0","result":{"t":"${long}"},\n"id":"r-1"}`
    const [head, tail] = message.split('\n')
    const chunks = [`id: 7\ndata: ${head!.slice(0, 1500)}`, `${head!.slice(1500)}\r\ndata: ${tail}\n\n`]
    const {data, oversized} = read([...chunks, 'data: {"ok":1}\n\n'])
    expect(oversized).to.deep.equal([{bytes: message.length, id: 'r-1'}])
    expect(data).to.deep.equal(['{"ok":1}'])
    const [first, second] = [`{"a":"${'y'.repeat(600)}"`, `,"id":5,"b":"${'y'.repeat(600)}"}`]
    const split = read([`data: ${first}\ndata: ${second}\n\n`])
    expect(split.oversized).to.deep.equal([{bytes: `${first}\n${second}`.length, id: 5}])
  })
})
