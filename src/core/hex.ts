/** Lower-case hex of bytes (the encoding of every hash in the API), through Node's Buffer without a copy. */
export function toHex(bytes: Uint8Array | ArrayBuffer): string {
  if (!(bytes instanceof Uint8Array)) return Buffer.from(bytes).toString('hex')
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}
