// Inclusion proof verification in the browser, so the dashboard does not have to take the
// service's word for it: RFC 9162 section 2.1.3.2 with SHA-256 from WebCrypto (available on https
// and on localhost only; elsewhere the caller says the check was not made).

const LEAF_PREFIX = 0x00 // RFC 9162 2.1.1: leaf hash = SHA-256(0x00 || d)
const NODE_PREFIX = 0x01 // RFC 9162 2.1.1: node hash = SHA-256(0x01 || left || right)

export function canVerifyInBrowser() {
  return Boolean(globalThis.crypto?.subtle)
}

function fromHex(hex) {
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return bytes
}

function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

async function hashWithPrefix(prefix, ...parts) {
  const input = new Uint8Array(1 + parts.reduce((n, part) => n + part.length, 0))
  input[0] = prefix
  let at = 1
  for (const part of parts) {
    input.set(part, at)
    at += part.length
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', input))
}

/** The RFC 9162 leaf hash of an event: its `hash` (32 raw bytes) is the leaf data (docs/verification.md 5). */
export async function leafHash(eventHashHex) {
  return toHex(await hashWithPrefix(LEAF_PREFIX, fromHex(eventHashHex)))
}

/**
 * RFC 9162 2.1.3.2: recomputes the root from the leaf hash and the audit path.
 * Returns the recomputed root (hex), or undefined when the path does not fit the tree size.
 */
export async function rootFromInclusionProof(leafIndex, treeSize, leafHashHex, auditPath) {
  if (leafIndex >= treeSize) return undefined
  let fn = leafIndex
  let sn = treeSize - 1
  let r = fromHex(leafHashHex)
  for (const p of auditPath.map(fromHex)) {
    if (sn === 0) return undefined
    if (fn % 2 === 1 || fn === sn) {
      r = await hashWithPrefix(NODE_PREFIX, p, r)
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2)
        sn = Math.floor(sn / 2)
      }
    } else {
      r = await hashWithPrefix(NODE_PREFIX, r, p)
    }
    fn = Math.floor(fn / 2)
    sn = Math.floor(sn / 2)
  }
  return sn === 0 ? toHex(r) : undefined
}
