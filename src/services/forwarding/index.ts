export {DestinationError, parseDestination, parseFilterText, parseHeader, type Destination} from './destination.js'
export {ForwardingService, forwardedTrails, type ForwardingOptions} from './forwarding-service.js'
export {forwardingStatus, type DestinationStatus} from './status.js'
