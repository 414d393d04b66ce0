export {DestinationError, parseDestination, parseFilterText, parseHeader, type Destination} from './destination.js'
export {ForwardingService, type ForwardingOptions} from './forwarding-service.js'
export type {ForwardedTrail} from './forwarder.js'
export {forwardingStatus, type DestinationStatus} from './status.js'
