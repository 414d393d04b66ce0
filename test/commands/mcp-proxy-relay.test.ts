/**
 * The stdio relay byte for byte, and what it does with bad input from either side (CONTRACT 11):
 * a scripted server sends odd but valid messages (unicode, a large result, notifications between
 * responses, responses out of order, a batch) and every byte reaches the client as it was sent.
 */
import {createHash} from 'node:crypto'
import {readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import canonicalize from 'canonicalize'
import {expect} from 'chai'
import {McpError} from '@modelcontextprotocol/sdk/types.js'
import {useTempDir} from '../support/hooks.js'
import {connectStdio, eventually, SCRIPTED_SERVER, startRawProxy, useSwitchableLog} from '../support/mcp.js'

const MiB = 1024 * 1024

describe('mcp-proxy relays stdio byte for byte, and survives bad input', function () {
  this.timeout(180_000)
  const log = useSwitchableLog()
  const state = useTempDir()
  const files = () => ({script: path.join(state, 'script.json'), received: path.join(state, 'received.bin')})

  it('passes odd but valid messages both ways unchanged, pairs them by id, and returns the exit code', async () => {
    const bigResult = {content: [{type: 'text', text: 'ß'.repeat(2.5 * MiB)}], structuredContent: {n: 1.0e2}}
    const server = {
      init:
        '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},' +
        '"serverInfo":{"name":"scripted","version":"9.9"}}}\n',
      progress: '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1.50}}\n',
      log:
        '{"method":"notifications/message","jsonrpc":"2.0","params":{"level":"info","data":"\u2028 ∂ 🌍 \\u00e9 ' +
        'عربى e\u0301"}}\r\n',
      big: `{"id":3,"result":${JSON.stringify(bigResult).replace('100', '1.0e2')},"jsonrpc":"2.0"}\n`,
      slow: '{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"late \\ud83c\\udf0d"}]}}\n',
      sampling:
        '{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}\n',
      stray: '{"jsonrpc":"2.0","id":99,"result":{}}\n',
      garbage: 'this is not JSON {\n',
      batch:
        '[{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"slow","inputSchema":{"type":"object"}}]}},' +
        '{"jsonrpc":"2.0","id":4,"result":{}}]\n',
    }
    const {script, received} = files()
    await writeFile(
      script,
      JSON.stringify({
        exitCode: 7,
        on: {
          '1': [server.init],
          '"a"': [server.progress],
          '3': [server.log, server.big, server.slow, server.sampling],
          '"s1"': [server.stray, server.garbage],
          '4': [server.batch],
        },
      }),
    )
    const client = [
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},' +
        '"clientInfo":{"name":"raw-client","version":"1"}}}\n',
      '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
      '{ "id" : "a", "jsonrpc":"2.0" , "method":"tools/call","params":{"name":"slow","arguments":' +
        '{"t":"\\u00e9\\ud83c\\udf0d","n":1.50},"_meta":{"progressToken":"p"}}}\r\n',
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"big","arguments":{}}}\n',
      '{"jsonrpc":"2.0","id":"s1","result":{"model":"m","role":"assistant","content":{"type":"text","text":"ok"}}}\n',
      '[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"tools/list"}]\n',
      '{"jsonrpc": oops\n',
    ]
    const proxy = startRawProxy(
      ['--server', log.url, '--state-dir', state],
      ['node', SCRIPTED_SERVER, script, received],
    )
    await proxy.send(client[0]!)
    await proxy.until('"serverInfo"')
    await proxy.send(client[1]! + client[2]!)
    await proxy.until('"progress":1.50')
    await proxy.send(client[3]!)
    await proxy.until('"id":"s1","method"')
    await proxy.send(client[4]!)
    await proxy.until('this is not JSON')
    await proxy.send(client[5]!)
    await proxy.until('"id":4,"result"')
    await proxy.send(client[6]!)
    expect(await proxy.end()).to.equal(7)

    const expected = [server.init, server.progress, server.log, server.big, server.slow, server.sampling]
    expected.push(server.stray, server.garbage, server.batch)
    expect(proxy.stdout().equals(Buffer.from(expected.join('')))).to.equal(true)
    expect((await readFile(received)).equals(Buffer.from(client.join('')))).to.equal(true)
    expect(proxy.stderr()).to.match(/the server sent a response to an unknown request id 99; forwarded as it is/)
    expect(proxy.stderr()).to.match(/the server sent a message that is not JSON .*forwarded as it is/)
    expect(proxy.stderr()).to.match(/the client sent a message that is not JSON .*forwarded as it is/)

    const events = await eventually(async () => {
      const all = await log.events()
      expect(all).to.have.length(7)
      return all
    })
    const byName = Object.fromEntries(events.map((e) => [e.action_name, e]))
    expect(events.map((e) => `${e.action_name} ${e.action_status}`).sort()).to.deep.equal([
      'big success',
      'initialize success',
      'ping success',
      'sampling/createMessage success',
      'slow success',
      'tools/list success',
      'tools/list success',
    ])
    expect(byName.slow!.input).to.deep.equal({t: 'é🌍', n: 1.5})
    expect(byName.slow!.output).to.deep.equal({content: [{type: 'text', text: 'late 🌍'}]})
    expect(byName.slow!.metadata).to.deep.include({jsonrpc_id: 'a'})
    const bigJcs = canonicalize(bigResult)!
    expect(byName.big!.output).to.deep.include({
      omitted: true,
      size: Buffer.byteLength(bigJcs),
      sha256: createHash('sha256').update(bigJcs).digest('hex'),
    })
    expect(byName.big!.metadata).to.deep.include({omitted: ['output']})
    expect(byName['sampling/createMessage']!.labels['mcp.direction']).to.equal('server_to_client')
    expect(events.find((e) => e.action_type === 'TOOL_DEFINITIONS_CHANGED')!.metadata).to.deep.include({
      added: ['slow'],
    })
    for (const event of events) expect(event.labels['mcp.server']).to.equal('scripted')
  })

  it('drops a line of 100 MiB from either side, answering for it, and the SDK client goes on', async () => {
    const {script, received} = files()
    const init =
      '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},' +
      '"serverInfo":{"name":"scripted","version":"1"}}}\n'
    const result = (id: number, text: string) =>
      `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"${text}"}]}}\n`
    await writeFile(
      script,
      JSON.stringify({
        on: {
          '0': [init],
          '1': [
            {
              line: {
                prefix: '{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"',
                repeat: 'x',
                times: 100 * MiB,
                suffix: '"}]},"id":1}',
              },
            },
          ],
          '2': ['{not json}\n', result(2, 'fine')],
          '3': ['{"jsonrpc":"2.0","id":77,"result":{}}\n', result(3, 'still fine')],
        },
      }),
    )
    const connection = await connectStdio(['node', SCRIPTED_SERVER, script, received], {
      proxy: ['--server', log.url, '--state-dir', state],
    })
    const client = connection.client
    const error = await client.callTool({name: 'huge', arguments: {}}).catch((e: McpError) => e)
    expect(error).to.be.instanceOf(McpError)
    expect((error as McpError).code).to.equal(-32012)
    expect((error as McpError).message).to.match(/the server sent a message of 1048576\d\d bytes/)
    expect(await client.callTool({name: 'next', arguments: {}})).to.deep.equal({
      content: [{type: 'text', text: 'fine'}],
    })
    expect(await client.callTool({name: 'last', arguments: {}})).to.deep.equal({
      content: [{type: 'text', text: 'still fine'}],
    })
    await connection.close()
    expect(connection.stderr()).to.match(/the server sent a message of \d+ bytes, more than .*; dropped \(id 1\)/)
    expect(connection.stderr()).to.match(/unknown request id 77/)
    const events = await eventually(async () => {
      const all = (await log.events()).filter((e) => e.action_type === 'TOOL_CALL')
      expect(all).to.have.length(3)
      return all
    })
    expect(events.map((e) => `${e.action_name} ${e.action_status}`)).to.deep.equal([
      'huge error',
      'next success',
      'last success',
    ])

    // The other way: a request of 100 MiB from the client never reaches the server; the client is answered.
    const raw = startRawProxy(['--server', log.url, '--state-dir', state], ['node', SCRIPTED_SERVER, script, received])
    await raw.send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}\n')
    await raw.until('"serverInfo"')
    const before = (await readFile(received)).length
    const huge = Buffer.alloc(100 * MiB, 'y')
    await raw.send('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"upload","arguments":{"data":"')
    await raw.send(huge)
    await raw.send('"}}}\n')
    await raw.until('"id":9,"error"')
    await raw.send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"next"}}\n')
    await raw.until('"fine"')
    expect(await raw.end()).to.equal(0)
    const reply = raw
      .stdout()
      .toString()
      .split('\n')
      .find((line) => line.includes('"id":9'))!
    expect(JSON.parse(reply).error.code).to.equal(-32012)
    expect((await readFile(received)).length - before).to.be.below(1000)
    expect(raw.stderr()).to.match(/the client sent a message of \d+ bytes, more than .*; dropped \(id 9\)/)
  })
})
