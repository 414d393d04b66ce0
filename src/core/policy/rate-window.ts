/**
 * The sliding window of `max_rate` (docs/api.md, Policy) for one agent. A window of
 * length `per` ending at time t is the half-open interval (t - per, t]: two events exactly `per`
 * apart never share a window, so "10 per 1m" allows one event every 6 s forever.
 *
 * Timestamps are set by clients and may go backwards within a chain. Chain order is what the
 * trail proves, so an event whose timestamp is earlier than a previous matching event of the same
 * agent is counted at that previous time (the clock is treated as having stood still). This keeps
 * the window sorted and bounded: only the last `max` times are needed to know whether the window
 * ending at a new event holds more than `max` events.
 */
export class RateWindow {
  private times: number[] = []
  private head = 0
  private latest = -Infinity

  constructor(
    private readonly max: number,
    private readonly perMs: number,
  ) {}

  /** Adds an event at `time` (ms); true when the window ending at it holds more than `max` events. */
  add(time: number): boolean {
    const at = time > this.latest ? time : this.latest
    this.latest = at
    while (this.head < this.times.length && this.times[this.head]! <= at - this.perMs) this.head++
    const exceeded = this.times.length - this.head + 1 > this.max
    this.times.push(at)
    if (this.times.length - this.head > this.max) this.head++
    this.compact()
    return exceeded
  }

  /** Drops consumed entries once they outnumber the live ones, so memory stays O(max). */
  private compact(): void {
    if (this.head >= 64 && this.head * 2 >= this.times.length) {
      this.times = this.times.slice(this.head)
      this.head = 0
    }
  }
}
