/** What every benchmark phase reports: rows of a table, and how it writes numbers. */

export interface BenchRow {
  what: string
  value: string
  target: string
  ceiling?: string
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', {maximumFractionDigits: digits, minimumFractionDigits: digits})
