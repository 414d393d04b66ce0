/**
 * PEM armour (RFC 7468): base64 DER between `-----BEGIN <label>-----` and `-----END <label>-----`.
 */
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g

/**
 * Every block of `pem` whose label is `label` (any label when omitted), in file order. Text
 * outside the blocks (OpenSSL's "subject=" lines, comments) is ignored, as RFC 7468 section 2 allows.
 */
export function pemToDer(pem: string, label?: string): Uint8Array[] {
  const blocks: Uint8Array[] = []
  for (const match of pem.matchAll(PEM_BLOCK)) {
    if (label !== undefined && match[1] !== label) continue
    const body = match[2]!.replace(/\s+/g, '')
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) throw new Error(`PEM block ${match[1]} is not base64`)
    blocks.push(new Uint8Array(Buffer.from(body, 'base64')))
  }
  return blocks
}

/** DER as a PEM block with 64-character lines (RFC 7468 section 2, the strict form). */
export function derToPem(der: Uint8Array, label: string): string {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? []
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`
}

/** Every certificate in a list of PEM texts (each may be a bundle), one PEM block each. */
export function splitCertificates(pems: readonly string[]): string[] {
  return pems.flatMap((pem) => pemToDer(pem, 'CERTIFICATE').map((der) => derToPem(der, 'CERTIFICATE')))
}
