/**
 * What `--server` and `mcp-proxy`'s command line make of what users type: the URL's root, the
 * sentence for each mistake, and where the MCP server's command starts with or without `--`.
 */
import {expect} from 'chai'
import {parseServerUrl} from '../../src/cli/server-url.js'
import {splitServerCommand, type FlagShape} from '../../src/cli/server-command.js'

describe('parseServerUrl', () => {
  const roots: Array<[string, string]> = [
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080'],
    ['http://127.0.0.1:8080/v1', 'http://127.0.0.1:8080'],
    ['HTTP://Audit.Example:8080/V1/', 'http://audit.example:8080'],
    ['https://audit.example/trail/v1', 'https://audit.example/trail'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
    [' http://127.0.0.1:8080 ', 'http://127.0.0.1:8080'],
  ]
  for (const [typed, root] of roots)
    it(`${typed} -> ${root}`, () => {
      expect(parseServerUrl(typed)).to.equal(root)
    })

  const mistakes: Array<[string, RegExp]> = [
    [
      '127.0.0.1:8080',
      /^--server 127\.0\.0\.1:8080 is not an http:\/\/ or https:\/\/ URL: type http:\/\/127\.0\.0\.1:8080 /,
    ],
    ['localhost:8080/v1', /: type http:\/\/localhost:8080 \(or https:\/\//],
    ['[::1]:8080', /: type http:\/\/\[::1\]:8080 /],
    ['ftp://127.0.0.1', /is not an http:\/\/ or https:\/\/ URL: give the URL serve prints/],
    ['http://a b', /give the URL serve prints/],
    ['', /^--server : give the URL serve prints/],
    ['http://127.0.0.1:8080/?x=1', /without a query, fragment or credentials/],
    ['http://user:pw@127.0.0.1:8080', /without a query, fragment or credentials \(the key goes in --api-key\)/],
  ]
  for (const [typed, said] of mistakes)
    it(`refuses ${JSON.stringify(typed)} saying what to type`, () => {
      expect(() => parseServerUrl(typed))
        .to.throw(said)
        .with.property('code', 'validation_error')
    })

  it('names the environment variable the URL came from', () => {
    expect(() => parseServerUrl('127.0.0.1:1', 'AUDIT_TRAIL_SERVER')).to.throw(/^AUDIT_TRAIL_SERVER 127\.0\.0\.1:1 /)
  })
})

describe('splitServerCommand', () => {
  const flags: Record<string, FlagShape> = {
    'data-dir': {type: 'option'},
    'require-log': {type: 'boolean'},
    'agent-id': {type: 'option'},
    help: {type: 'boolean', char: 'h'},
  }
  const cases: Array<[string[], string[], string[]]> = [
    [
      ['--data-dir', 'd', '--', 'npx', '-y', 'pkg'],
      ['--data-dir', 'd'],
      ['npx', '-y', 'pkg'],
    ],
    [
      ['--data-dir', 'd', 'npx', '-y', 'pkg'],
      ['--data-dir', 'd'],
      ['npx', '-y', 'pkg'],
    ],
    [
      ['--data-dir=d', '--require-log', 'node', 's.js', '--', '-x'],
      ['--data-dir=d', '--require-log'],
      ['node', 's.js', '--', '-x'],
    ],
    [['--agent-id', '--odd', 'srv'], ['--agent-id', '--odd'], ['srv']],
    [['-h'], ['-h'], []],
    [[], [], []],
  ]
  for (const [argv, own, command] of cases)
    it(argv.join(' ') || '(nothing)', () => {
      expect(splitServerCommand(argv, flags)).to.deep.equal({own, command})
    })

  it('an unknown flag before the command says where the command goes, with the nearest flag', () => {
    expect(() => splitServerCommand(['-y', 'pkg'], flags)).to.throw(
      /^Nonexistent flag: -y; if it belongs to the MCP server's command, give that command after --/,
    )
    expect(() => splitServerCommand(['--require-logs', 'srv'], flags)).to.throw(
      /^Nonexistent flag: --require-logs; did you mean --require-log\?; /,
    )
  })
})
