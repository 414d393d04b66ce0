import {expect} from 'chai'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import {createTsaMaterial, pemToDer, type TsaMaterial} from '../../../src/core/timestamp/index.js'
import {opensslOk, tempDir} from './openssl.js'

describe('core/timestamp/material', () => {
  let dir: string
  let cleanup: () => Promise<void>
  let material: TsaMaterial
  const now = new Date('2026-03-01T12:34:56.789Z')

  before(async () => {
    ;({dir, cleanup} = await tempDir())
    material = await createTsaMaterial({commonName: 'Example TSA', now})
    await writeFile(path.join(dir, 'ca.pem'), material.caCertPem)
    await writeFile(path.join(dir, 'tsa.pem'), material.tsaCertPem)
    await writeFile(path.join(dir, 'tsa.key'), material.tsaKeyPem)
    await writeFile(path.join(dir, 'ca.key'), material.caKeyPem!)
  })
  after(() => cleanup())

  it('issues a TSA certificate that OpenSSL accepts for the timestampsign purpose under the CA', async () => {
    const out = await opensslOk(
      [
        'verify',
        '-CAfile',
        'ca.pem',
        '-purpose',
        'timestampsign',
        '-attime',
        String(Math.floor(now.getTime() / 1000) + 60),
        'tsa.pem',
      ],
      dir,
    )
    expect(out.trim()).to.equal('tsa.pem: OK')
  })

  it('makes a root CA: CA:TRUE and keyCertSign, both critical, self-signed', async () => {
    const text = await opensslOk(['x509', '-in', 'ca.pem', '-noout', '-text'], dir)
    expect(text).to.match(/Issuer: CN = Example TSA root CA/)
    expect(text).to.match(/Subject: CN = Example TSA root CA/)
    expect(text).to.match(/X509v3 Basic Constraints: critical\s+CA:TRUE/)
    expect(text).to.match(/X509v3 Key Usage: critical\s+Certificate Sign, CRL Sign/)
    expect(text).to.match(/Public Key Algorithm: id-ecPublicKey[\s\S]*NIST CURVE: P-256/)
    expect(text).to.match(/Signature Algorithm: ecdsa-with-SHA256/)
  })

  it('makes a TSA certificate with critical EKU timeStamping and digitalSignature only (RFC 3161 2.3)', async () => {
    const text = await opensslOk(['x509', '-in', 'tsa.pem', '-noout', '-text'], dir)
    expect(text).to.match(/Subject: CN = Example TSA\n/)
    expect(text).to.match(/X509v3 Extended Key Usage: critical\s+Time Stamping\n/)
    expect(text).to.match(/X509v3 Key Usage: critical\s+Digital Signature\n/)
    expect(text).to.match(/X509v3 Authority Key Identifier/)
    expect(text).not.to.match(/CA:TRUE/)
  })

  it('is valid from now (to the second) for 10 years', async () => {
    const dates = await opensslOk(['x509', '-in', 'tsa.pem', '-noout', '-startdate', '-enddate'], dir)
    expect(dates).to.equal('notBefore=Mar  1 12:34:56 2026 GMT\nnotAfter=Mar  1 12:34:56 2036 GMT\n')
  })

  it('returns PKCS#8 keys that belong to their certificates', async () => {
    for (const [cert, key] of [
      ['tsa.pem', 'tsa.key'],
      ['ca.pem', 'ca.key'],
    ]) {
      expect(pemToDer(key === 'tsa.key' ? material.tsaKeyPem : material.caKeyPem!, 'PRIVATE KEY')).to.have.length(1)
      const fromCert = await opensslOk(['x509', '-in', cert!, '-noout', '-pubkey'], dir)
      const fromKey = await opensslOk(['pkey', '-in', key!, '-pubout'], dir)
      expect(fromKey).to.equal(fromCert)
    }
  })

  it('gives each certificate a fresh random positive serial', async () => {
    const other = await createTsaMaterial({now})
    await writeFile(path.join(dir, 'other.pem'), other.tsaCertPem)
    const serials = await Promise.all(
      ['tsa.pem', 'ca.pem', 'other.pem'].map((file) => opensslOk(['x509', '-in', file, '-noout', '-serial'], dir)),
    )
    expect(new Set(serials).size).to.equal(3)
    for (const serial of serials) expect(serial).to.match(/^serial=[4-7][0-9A-F]{31}\n$/)
  })

  it('uses a default common name for the embedded TSA', async () => {
    const plain = await createTsaMaterial()
    await writeFile(path.join(dir, 'plain.pem'), plain.tsaCertPem)
    expect(await opensslOk(['x509', '-in', 'plain.pem', '-noout', '-subject'], dir)).to.equal(
      'subject=CN = audit-trail embedded TSA\n',
    )
  })
})
