/** Deliberately naive references the policy engine is cross-checked against. */

/**
 * Naive reference of the documented definition: times are clamped to their running maximum
 * (chain order wins over a clock going backwards); the event at position k exceeds the rate when
 * more than `max` events j <= k lie in the half-open window (t_k - per, t_k].
 */
export function naiveExceeded(times: number[], max: number, per: number): boolean[] {
  const clamped: number[] = []
  for (const time of times) clamped.push(Math.max(time, clamped.at(-1) ?? -Infinity))
  return clamped.map((t, k) => clamped.slice(0, k + 1).filter((u) => u > t - per).length > max)
}
