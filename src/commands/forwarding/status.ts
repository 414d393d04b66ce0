import {AuditCommand} from '../../cli/base.js'
import type {DestinationStatus} from '../../services/forwarding/status.js'

export default class ForwardingStatus extends AuditCommand {
  static override description =
    "Show each forwarding destination's position, lag and last error (serve --forward, docs/forwarding.md)"

  static override examples = [
    '<%= config.bin %> forwarding status --server http://127.0.0.1:8080',
    '<%= config.bin %> forwarding status --database-url postgres://audit@db/audit --json',
  ]

  async run(): Promise<{destinations: DestinationStatus[]}> {
    const {flags} = await this.parse(ForwardingStatus)
    const destinations = await this.withClient(flags, (client) => client.forwardingStatus())
    if (!this.jsonEnabled()) {
      if (destinations.length === 0) this.log('no forwarding destinations (serve --forward URL adds one)')
      for (const destination of destinations) this.printDestination(destination)
    }
    return {destinations}
  }

  private printDestination(destination: DestinationStatus): void {
    const filter = destination.filter ? ` (filter ${destination.filter})` : ''
    this.log(`${destination.url}${filter}: ${destination.state.replace('_', ' ')}`)
    for (const trail of destination.trails) {
      this.log(
        `  trail ${trail.trail}: position ${trail.position}, ${trail.lag_events} events behind` +
          (trail.lag_events > 0 ? ` (oldest recorded ${trail.lag_seconds} s ago)` : ''),
      )
    }
    if (destination.last_error)
      this.log(`  last error at ${destination.last_error.at}: ${destination.last_error.message}`)
  }
}
