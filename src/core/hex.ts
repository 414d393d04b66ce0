/** Lower-case hex of bytes (the encoding of every hash in the API), through Node's Buffer without a copy. */
export function toHex(bytes: Uint8Array | ArrayBuffer): string {
  const view = bytes instanceof Uint8Array ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : Buffer.from(bytes)
  return view.toString('hex')
}
