/**
 * OpenSSL, the independent party of the timestamp tests: it makes certificates, acts as a TSA
 * (`openssl ts -reply`) and verifies tokens (`openssl ts -verify`).
 */
import {execFile} from 'node:child_process'
import {mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

export interface RunResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs `openssl args...` in `cwd`; never rejects on a non-zero exit, so tests can assert on it. */
export function openssl(args: string[], cwd: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile('openssl', args, {cwd, encoding: 'utf8'}, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error)
      resolve({code: error ? (error.code as number) : 0, stdout, stderr})
    })
  })
}

export async function opensslOk(args: string[], cwd: string): Promise<string> {
  const result = await openssl(args, cwd)
  if (result.code !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${result.stderr}`)
  return result.stdout
}

export async function tempDir(prefix = 'atrail-ts-'): Promise<{dir: string; cleanup: () => Promise<void>}> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix))
  return {dir, cleanup: () => rm(dir, {recursive: true, force: true})}
}

/** `openssl ts -verify -digest <hex> -token_in -in token.der -CAfile ca.pem`, as docs/timestamps.md says. */
export async function opensslVerifyToken(
  dir: string,
  token: Uint8Array,
  digestHex: string,
  caPem: string,
): Promise<RunResult> {
  await writeFile(path.join(dir, 'token.der'), token)
  await writeFile(path.join(dir, 'ca.pem'), caPem)
  return openssl(['ts', '-verify', '-digest', digestHex, '-token_in', '-in', 'token.der', '-CAfile', 'ca.pem'], dir)
}

/** `openssl ts -reply -in token.der -token_in -text`: OpenSSL's reading of a token. */
export async function opensslTokenText(dir: string, token: Uint8Array): Promise<string> {
  await writeFile(path.join(dir, 'text.der'), token)
  return opensslOk(['ts', '-reply', '-in', 'text.der', '-token_in', '-text'], dir)
}

const REQ_CONFIG = `
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[v3_ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[v3_tsa]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = critical,timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[v3_no_eku]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
[v3_eku_not_critical]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = timeStamping
`

export type KeyKind = 'rsa' | 'ec'

function keyArgs(kind: KeyKind): string[] {
  return kind === 'rsa' ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']
}

/** A self-signed root CA `<name>.pem` / `<name>.key` made by `openssl req -x509`. */
export async function opensslCa(dir: string, name: string, commonName: string, kind: KeyKind = 'ec'): Promise<string> {
  await writeFile(path.join(dir, 'req.cnf'), REQ_CONFIG)
  await opensslOk(
    [
      'req',
      '-x509',
      ...keyArgs(kind),
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '3650',
      '-config',
      'req.cnf',
      '-extensions',
      'v3_ca',
      '-subj',
      `/CN=${commonName}`,
    ],
    dir,
  )
  return readFile(path.join(dir, `${name}.pem`), 'utf8')
}

/**
 * A certificate `<name>.pem` with PKCS#8 key `<name>.key`, issued by CA `<ca>` with an extension section of
 * REQ_CONFIG.
 */
export async function opensslCert(
  dir: string,
  ca: string,
  name: string,
  commonName: string,
  section: 'v3_tsa' | 'v3_no_eku' | 'v3_eku_not_critical',
  kind: KeyKind = 'ec',
): Promise<{certPem: string; keyPem: string}> {
  await writeFile(path.join(dir, 'req.cnf'), REQ_CONFIG)
  await opensslOk(
    [
      'req',
      '-new',
      ...keyArgs(kind),
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-config',
      'req.cnf',
      '-subj',
      `/CN=${commonName}`,
    ],
    dir,
  )
  await opensslOk(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.pem`,
      '-CAkey',
      `${ca}.key`,
      '-set_serial',
      '4660',
      '-days',
      '3650',
      '-out',
      `${name}.pem`,
      '-extfile',
      'req.cnf',
      '-extensions',
      section,
    ],
    dir,
  )
  return {
    certPem: await readFile(path.join(dir, `${name}.pem`), 'utf8'),
    keyPem: await readFile(path.join(dir, `${name}.key`), 'utf8'),
  }
}

/**
 * A minimal `openssl ts` TSA configuration (the [tsa] section of openssl.cnf) in `ts.cnf`, signing
 * with `<signer>.pem` / `<signer>.key`.
 */
export async function opensslTsaConfig(
  dir: string,
  signer: string,
  options: {essCertIdAlg?: 'sha1' | 'sha256'; digests?: string} = {},
): Promise<void> {
  await writeFile(path.join(dir, 'tsaserial'), '01\n')
  await writeFile(
    path.join(dir, 'ts.cnf'),
    `[tsa]
default_tsa = tsa_config
[tsa_config]
dir = .
serial = ./tsaserial
crypto_device = builtin
signer_cert = ./${signer}.pem
signer_key = ./${signer}.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = ${options.digests ?? 'sha256'}
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = ${options.essCertIdAlg ?? 'sha1'}
`,
  )
}

let replies = 0

/** Pipes a DER TimeStampReq through `openssl ts -reply` and returns the DER TimeStampResp. */
export async function opensslReply(dir: string, query: Uint8Array): Promise<Uint8Array> {
  const id = ++replies
  await writeFile(path.join(dir, `q${id}.tsq`), query)
  await opensslOk(['ts', '-reply', '-config', 'ts.cnf', '-queryfile', `q${id}.tsq`, '-out', `r${id}.tsr`], dir)
  return new Uint8Array(await readFile(path.join(dir, `r${id}.tsr`)))
}
