/** C2SP checkpoints and their cosignatures. */
export * from './note-text.js'
export * from './cosignature.js'
