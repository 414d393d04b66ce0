/** C2SP tlog-tiles addressing. */
export * from './path.js'
