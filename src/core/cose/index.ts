/** COSE (RFC 9052) signatures, COSE Receipts (RFC 9942), key sets and problem details (RFC 9290). */
export * from './cbor.js'
export * from './errors.js'
export * from './key-set.js'
export * from './problem.js'
export * from './receipt.js'
export * from './sign1.js'
export * from './statement.js'
