import {expect} from 'chai'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {
  createTsaMaterial,
  describeTimestampToken,
  EMBEDDED_POLICY_OID,
  issueTimestampToken,
  verifyTimestampToken,
  type TsaMaterial,
} from '../../../src/core/timestamp/index.js'
import {openssl, opensslCa, opensslCert, opensslOk, opensslTokenText, opensslVerifyToken, tempDir} from './openssl.js'

// printf 'abc' | sha256sum
const ABC_SHA256 = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
const digest = Buffer.from(ABC_SHA256, 'hex')

describe('core/timestamp/token (RFC 3161 2.4.2, RFC 5816)', () => {
  let dir: string
  let cleanup: () => Promise<void>
  let material: TsaMaterial

  before(async () => {
    ;({dir, cleanup} = await tempDir())
    material = await createTsaMaterial()
  })
  after(() => cleanup())

  it('issues a token that `openssl ts -verify -digest <root> -CAfile ca.pem` accepts', async () => {
    const issued = await issueTimestampToken(material, digest)
    const result = await opensslVerifyToken(dir, issued.token, ABC_SHA256, material.caCertPem)
    expect(result.stdout).to.equal('Verification: OK\n')
    expect(result.code).to.equal(0)
    expect(issued.tsaName).to.equal('audit-trail embedded TSA')
  })

  it('shows OpenSSL the nonce, policy, serial and millisecond genTime it was given', async () => {
    const now = new Date('2026-11-21T22:45:00.123Z')
    const issued = await issueTimestampToken(material, digest, {
      nonce: 0x1234567890abcdefn,
      now,
      policyOid: '1.3.6.1.4.1.99999.1',
    })
    const text = await opensslTokenText(dir, issued.token)
    expect(text).to.match(/Version: 1\n/)
    expect(text).to.match(/Policy OID: 1\.3\.6\.1\.4\.1\.99999\.1\n/)
    expect(text).to.match(/Hash Algorithm: sha256\n/)
    expect(text).to.match(/0000 - ba 78 16 bf 8f 01 cf ea-41 41 40 de 5d ae 22 23/)
    expect(text).to.match(/Nonce: 0x1234567890ABCDEF\n/)
    expect(text).to.include(`Serial number: 0x${issued.serialNumber.toUpperCase()}\n`)
    expect(text).to.match(/Time stamp: Nov 21 22:45:00\.123 2026 GMT\n/)
    expect(issued.genTime.toISOString()).to.equal('2026-11-21T22:45:00.123Z')
    expect(issued.serialNumber).to.match(/^[4-7][0-9a-f]{31}$/)
  })

  it('defaults to the embedded policy OID and takes a byte nonce as an unsigned integer', async () => {
    const issued = await issueTimestampToken(material, digest, {nonce: Uint8Array.of(0xff, 0x01)})
    const text = await opensslTokenText(dir, issued.token)
    expect(text).to.include(`Policy OID: ${EMBEDDED_POLICY_OID}\n`)
    expect(text).to.match(/Nonce: 0xFF01\n/)
    expect(describeTimestampToken(issued.token).nonceHex).to.equal('ff01')
  })

  it('writes no nonce when none is given, and a new serial every time', async () => {
    const first = await issueTimestampToken(material, digest)
    const second = await issueTimestampToken(material, digest)
    expect(await opensslTokenText(dir, first.token)).to.match(/Nonce: unspecified\n/)
    expect(first.serialNumber).not.to.equal(second.serialNumber)
  })

  it('signs contentType, messageDigest, signingTime and signingCertificateV2, and embeds the certificate', async () => {
    const issued = await issueTimestampToken(material, digest)
    await writeFile(path.join(dir, 'cms.der'), issued.token)
    const printed = await opensslOk(['cms', '-cmsout', '-print', '-inform', 'DER', '-in', 'cms.der'], dir)
    expect(printed).to.match(/eContentType: id-smime-ct-TSTInfo/)
    // In DER order (X.690 11.6 sorts a SET OF by encoding): shorter attributes first here.
    const order = [...printed.matchAll(/object: ([\w-]+) \(1\.2\.840\.113549\.1\.9\./g)].map((match) => match[1])
    expect(order).to.deep.equal(['contentType', 'signingTime', 'messageDigest', 'id-smime-aa-signingCertificateV2'])
    expect(printed).to.match(/subject: CN=audit-trail embedded TSA\n/)
    // eContent [0] holds a primitive OCTET STRING (04), not BER chunks (24): id-ct-TSTInfo a0 <len> 04.
    expect(Buffer.from(issued.token).toString('hex')).to.match(
      /060b2a864886f70d0109100104a0(?:[0-7][0-9a-f]|81[0-9a-f]{2})04/,
    )
  })

  it('leaves the certificate out when certReq is false; OpenSSL then needs it given with -untrusted', async () => {
    const issued = await issueTimestampToken(material, digest, {certReq: false})
    await writeFile(path.join(dir, 'tsa.pem'), material.tsaCertPem)
    const without = await opensslVerifyToken(dir, issued.token, ABC_SHA256, material.caCertPem)
    expect(without.stdout).to.equal('Verification: FAILED\n')
    const withCert = await openssl(
      [
        'ts',
        '-verify',
        '-digest',
        ABC_SHA256,
        '-token_in',
        '-in',
        'token.der',
        '-CAfile',
        'ca.pem',
        '-untrusted',
        'tsa.pem',
      ],
      dir,
    )
    expect(withCert.stdout).to.equal('Verification: OK\n')
    const ours = await verifyTimestampToken(issued.token, {digest, trustAnchorsPem: [material.caCertPem]})
    expect(ours.valid).to.equal(false)
    expect(ours.error).to.match(/does not include the TSA certificate/)
  })

  it('signs with an OpenSSL-made RSA TSA key and certificate too', async () => {
    const caPem = await opensslCa(dir, 'rsaca', 'RSA Root', 'rsa')
    const {certPem, keyPem} = await opensslCert(dir, 'rsaca', 'rsatsa', 'RSA TSA', 'v3_tsa', 'rsa')
    const issued = await issueTimestampToken({caCertPem: caPem, tsaCertPem: certPem, tsaKeyPem: keyPem}, digest)
    expect((await opensslVerifyToken(dir, issued.token, ABC_SHA256, caPem)).stdout).to.equal('Verification: OK\n')
    expect(await verifyTimestampToken(issued.token, {digest, trustAnchorsPem: [caPem]})).to.deep.include({
      valid: true,
      tsaName: 'RSA TSA',
    })
  })

  it('refuses a digest that is not 32 bytes and material without a usable key', async () => {
    let error: unknown
    await issueTimestampToken(material, Buffer.alloc(31)).catch((caught) => (error = caught))
    expect(error).to.be.instanceOf(RangeError)
    await issueTimestampToken({...material, tsaKeyPem: 'no key here'}, digest).catch((caught) => (error = caught))
    expect(error).to.have.property('code', 'tsa_unavailable')
    expect((error as Error).message).to.match(/PRIVATE KEY/)
  })
})
