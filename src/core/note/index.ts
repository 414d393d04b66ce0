/** C2SP signed notes and their keys. */
export * from './keys.js'
export * from './note.js'
