import * as nodeCrypto from 'node:crypto'
import {expect} from 'chai'
import {
  CheckpointError,
  cosignatureSigner,
  cosignatureVerifier,
  cosignatureVerifierKey,
  formatCheckpoint,
  parseCheckpoint,
} from '../../../src/core/checkpoint/index.js'
import {ed25519FromSeed} from '../../../src/core/crypto.js'
import {NoteError, openNote, parseVerifierKey, signNote} from '../../../src/core/note/index.js'

// The example checkpoint of C2SP tlog-checkpoint and tlog-witness.
const EXAMPLE = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n'

describe('C2SP tlog-checkpoint', () => {
  it('parses the spec example and formats it back byte for byte', () => {
    const checkpoint = parseCheckpoint(EXAMPLE)
    expect(checkpoint.origin).to.equal('example.com/behind-the-sofa')
    expect(checkpoint.size).to.equal(20852163)
    expect(Buffer.from(checkpoint.root).toString('base64')).to.equal('CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=')
    expect(formatCheckpoint(checkpoint)).to.equal(EXAMPLE)
    expect(parseCheckpoint(`${EXAMPLE}extension line\n`).extensions).to.deep.equal(['extension line'])
  })

  for (const [what, text] of [
    ['no final newline', EXAMPLE.slice(0, -1)],
    ['a size with a leading zero', EXAMPLE.replace('20852163', '020852163')],
    ['a negative size', EXAMPLE.replace('20852163', '-1')],
    [
      'a root of 31 bytes',
      EXAMPLE.replace('CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=', Buffer.alloc(31).toString('base64')),
    ],
    ['a root in non-canonical base64', EXAMPLE.replace('q2I=', 'q2J=')],
    ['no origin', EXAMPLE.replace('example.com/behind-the-sofa', '')],
    ['an empty extension line', `${EXAMPLE}\n`],
  ]) {
    it(`refuses ${what}`, () => {
      expect(() => parseCheckpoint(text!))
        .to.throw(CheckpointError)
        .with.property('code', 'malformed_checkpoint')
    })
  }
})

describe('C2SP tlog-cosignature v1 (Ed25519)', () => {
  const seed = Buffer.alloc(32, 7)
  const key = ed25519FromSeed(seed)
  const signer = cosignatureSigner('witness.example/w1', key, () => 1679315147)
  const vkey = cosignatureVerifierKey('witness.example/w1', key.publicKey)

  it('signs `cosignature/v1\\ntime <t>\\n` + the body, with the time in the first 8 bytes', () => {
    const line = signNote(EXAMPLE, [signer]).slice(EXAMPLE.length + 1)
    const bytes = Buffer.from(line.trim().split(' ')[2]!, 'base64')
    expect(bytes).to.have.length(4 + 8 + 64)
    expect(bytes.readUInt32BE(0)).to.equal(parseVerifierKey(vkey).keyId)
    expect(bytes.readBigUInt64BE(4)).to.equal(1679315147n)
    // Checked with node:crypto directly, over the message tlog-cosignature spells out.
    const publicKey = nodeCrypto.createPublicKey({
      key: {kty: 'OKP', crv: 'Ed25519', x: key.publicKey.toString('base64url')},
      format: 'jwk',
    })
    const message = Buffer.from(`cosignature/v1\ntime 1679315147\n${EXAMPLE}`)
    expect(nodeCrypto.verify(null, message, publicKey, bytes.subarray(12))).to.equal(true)
  })

  it('has a key id over signature type 0x04 and verifies through openNote', () => {
    const material = Buffer.from(vkey.split('+')[2]!, 'base64')
    expect(material[0]).to.equal(0x04)
    const opened = openNote(signNote(EXAMPLE, [signer]), [cosignatureVerifier(vkey)])
    expect(opened.verified.map((s) => s.name)).to.deep.equal(['witness.example/w1'])
  })

  it('rejects a cosignature whose time was changed', () => {
    const signed = signNote(EXAMPLE, [signer])
    const [prefix, b64] = [signed.slice(0, signed.lastIndexOf(' ') + 1), signed.slice(signed.lastIndexOf(' ') + 1, -1)]
    const bytes = Buffer.from(b64, 'base64')
    bytes.writeBigUInt64BE(1679315148n, 4)
    expect(() => openNote(`${prefix}${bytes.toString('base64')}\n`, [cosignatureVerifier(vkey)]))
      .to.throw(NoteError)
      .with.property('code', 'invalid_signature')
  })
})

describe('checkpoint signatures checked with OpenSSL', () => {
  it('openssl pkeyutl verifies the log signature over the checkpoint text (docs/verification.md 7)', async () => {
    const {execFileSync} = await import('node:child_process')
    const {mkdtempSync, writeFileSync, rmSync} = await import('node:fs')
    const {tmpdir} = await import('node:os')
    const {join} = await import('node:path')
    const {ed25519Generate} = await import('../../../src/core/crypto.js')
    const {ed25519NoteSigner} = await import('../../../src/core/note/index.js')
    const {key} = ed25519Generate()
    const note = signNote(EXAMPLE, [ed25519NoteSigner('example.com/behind-the-sofa', key)])
    const dir = mkdtempSync(join(tmpdir(), 'atrail-ossl-'))
    try {
      writeFileSync(join(dir, 'text'), EXAMPLE)
      writeFileSync(join(dir, 'sig.bin'), Buffer.from(note.trim().split(' ').at(-1)!, 'base64').subarray(4))
      writeFileSync(
        join(dir, 'log.der'),
        Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), key.publicKey]),
      )
      execFileSync('openssl', [
        'pkey',
        '-pubin',
        '-inform',
        'DER',
        '-in',
        join(dir, 'log.der'),
        '-out',
        join(dir, 'log.pub'),
      ])
      const out = execFileSync('openssl', [
        'pkeyutl',
        '-verify',
        '-pubin',
        '-inkey',
        join(dir, 'log.pub'),
        '-rawin',
        '-in',
        join(dir, 'text'),
        '-sigfile',
        join(dir, 'sig.bin'),
      ])
      expect(out.toString()).to.match(/Signature Verified Successfully/)
      writeFileSync(join(dir, 'text'), EXAMPLE.replace('20852163', '20852164'))
      expect(() =>
        execFileSync(
          'openssl',
          [
            'pkeyutl',
            '-verify',
            '-pubin',
            '-inkey',
            join(dir, 'log.pub'),
            '-rawin',
            '-in',
            join(dir, 'text'),
            '-sigfile',
            join(dir, 'sig.bin'),
          ],
          {stdio: 'pipe'},
        ),
      ).to.throw()
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
