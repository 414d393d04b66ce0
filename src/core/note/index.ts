/** C2SP signed notes and their keys. */
export * from './verifier-keys.js'
export * from './note.js'
