import {readFileSync} from 'node:fs'
import {expect} from 'chai'
import {ed25519FromSeed, sha256} from '../../../src/core/crypto.js'
import {
  ed25519NoteSignerFromSeed,
  ed25519NoteVerifier,
  keyId,
  NoteError,
  openNote,
  parseSignerKey,
  parseVerifierKey,
  signNote,
} from '../../../src/core/note/index.js'

// Known answers: golang.org/x/mod/sumdb/note note_test.go (the PeterNeumann key, TestOpen/TestSign)
// and the example of C2SP signed-note.md (example.com/foo).
const vectors = JSON.parse(readFileSync(new URL('c2sp-signed-note.json', import.meta.url), 'utf8')) as {
  notes: Array<{name: string; verifier_key: string; signer_key?: string; text: string; signed_note: string}>
}

describe('C2SP signed notes (known answers)', () => {
  for (const vector of vectors.notes) {
    describe(vector.name, () => {
      it('verifies and gives back the text', () => {
        const opened = openNote(vector.signed_note, [ed25519NoteVerifier(vector.verifier_key)])
        expect(opened.text).to.equal(vector.text)
        expect(opened.verified).to.have.length(1)
        expect(opened.unverified).to.have.length(0)
      })

      it('has the key id SHA-256(name || 0x0A || 0x01 || public key)[:4]', () => {
        const key = parseVerifierKey(vector.verifier_key)
        const [name, id, material] = vector.verifier_key.split('+')
        const recomputed = sha256(Buffer.concat([Buffer.from(`${name}\n`), Buffer.from(material!, 'base64')]))
          .subarray(0, 4)
          .toString('hex')
        expect(recomputed).to.equal(id)
        expect(keyId(key.name, 1, key.publicKey).toString(16).padStart(8, '0')).to.equal(id)
      })

      it('fails after any single-byte change', () => {
        const verifier = ed25519NoteVerifier(vector.verifier_key)
        const original = Buffer.from(vector.signed_note, 'utf8')
        let mutations = 0
        for (let i = 0; i < original.length; i++) {
          for (const flip of [0x01, 0x20, 0x80]) {
            const mutated = Buffer.from(original)
            mutated[i] = mutated[i]! ^ flip
            expect(() => openNote(mutated, [verifier]), `byte ${i} ^ ${flip}`).to.throw(NoteError)
            mutations++
          }
        }
        expect(mutations).to.equal(original.length * 3)
      })
    })
  }

  it('signs the PeterNeumann note exactly as Go does (Ed25519 is deterministic)', () => {
    const vector = vectors.notes[0]!
    const signer = parseSignerKey(vector.signer_key!)
    expect(signer.name).to.equal('PeterNeumann')
    const signed = signNote(vector.text, [ed25519NoteSignerFromSeed(signer.name, signer.seed)])
    expect(signed).to.equal(vector.signed_note)
    expect(ed25519FromSeed(signer.seed).publicKey.toString('base64')).to.equal(
      parseVerifierKey(vector.verifier_key).publicKey.toString('base64'),
    )
  })

  it('ignores signatures of unknown keys, but needs one known key', () => {
    const [neumann, foo] = vectors.notes
    const otherLine = foo!.signed_note.slice(foo!.signed_note.indexOf('\u2014'))
    const both = neumann!.signed_note + otherLine
    const opened = openNote(both, [ed25519NoteVerifier(neumann!.verifier_key)])
    expect(opened.verified.map((s) => s.name)).to.deep.equal(['PeterNeumann'])
    expect(opened.unverified.map((s) => s.name)).to.deep.equal(['example.com/foo'])
    expect(() => openNote(neumann!.signed_note, [ed25519NoteVerifier(foo!.verifier_key)]))
      .to.throw(NoteError)
      .with.property('code', 'unverified')
  })

  it('rejects a note where a known key signed something else', () => {
    const [neumann, foo] = vectors.notes
    const fooSignature = foo!.signed_note.slice(foo!.signed_note.indexOf('\u2014'))
    const forged = `${foo!.text}\n${neumann!.signed_note.slice(neumann!.signed_note.indexOf('\u2014'))}${fooSignature}`
    expect(() => openNote(forged, [ed25519NoteVerifier(neumann!.verifier_key), ed25519NoteVerifier(foo!.verifier_key)]))
      .to.throw(NoteError)
      .with.property('code', 'invalid_signature')
  })

  it('refuses a verifier key whose id does not match its key', () => {
    const key = vectors.notes[0]!.verifier_key.replace('c74f20a3', 'c74f20a4')
    expect(() => parseVerifierKey(key)).to.throw(/does not match/)
  })
})
