import {expect} from 'chai'
import {runCli} from '../support/cli.js'

/** One sentence on stderr, exit 2, nothing on stdout, whatever was mistyped. */
async function refused(argv: string[]): Promise<string> {
  const res = await runCli(argv)
  expect(res.code, `${argv.join(' ')}: ${res.stderr}`).to.equal(2)
  expect(res.stdout, argv.join(' ')).to.equal('')
  expect(res.stderr.trim().split('\n'), argv.join(' ')).to.have.length(1)
  return res.stderr
}

describe('mistyped commands and flags (bin/run.js, no terminal)', function () {
  this.timeout(60_000)

  it('suggests the nearest command, without a prompt', async () => {
    // runCli gives the CLI a pipe for stdin, as CI does: a prompt would wait for an answer there.
    expect(await refused(['evnts'])).to.equal(
      'Error: "evnts" is not a command of audit-trail: did you mean "events"? (see audit-trail --help)\n',
    )
    expect(await refused(['evnts', 'list'])).to.contain('did you mean "events list"?')
    expect(await refused(['merkle', 'rot'])).to.contain(
      'audit-trail merkle has no command "rot": did you mean "merkle root"?',
    )
    // Nothing near: no guess.
    expect(await refused(['nosuch'])).to.equal(
      'Error: "nosuch" is not a command of audit-trail (see audit-trail --help)\n',
    )
  })

  it('suggests the nearest flag of the command', async () => {
    expect(await refused(['stats', '--sever', 'http://127.0.0.1:9'])).to.equal(
      'Error: Nonexistent flag: --sever; did you mean --server? (see --help)\n',
    )
    expect(await refused(['verify', '--pakage=x.atrail.json'])).to.contain('did you mean --package?')
    expect(await refused(['agents', '--jsn'])).to.contain('did you mean --json?')
    expect(await refused(['stats', '--nope'])).to.equal('Error: Nonexistent flag: --nope (see --help)\n')
  })
})
