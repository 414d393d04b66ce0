/** C2SP checkpoints and their cosignatures. */
export * from './checkpoint.js'
export * from './cosignature.js'
