export * from './events.js'
export * from './request.js'
export * from './state.js'
