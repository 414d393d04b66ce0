/** Human output: colour only on a terminal and never with NO_COLOR; plain aligned tables. */
import {Chalk} from 'chalk'

export const colour = new Chalk({level: process.stdout.isTTY && !('NO_COLOR' in process.env) ? 1 : 0})

/** Left-aligned columns separated by two spaces; long cells are cut with an ellipsis. */
export function formatTable(headers: string[], rows: Array<Array<string | number | boolean>>, maxWidth = 60): string {
  const cells = rows.map((row) => row.map((cell) => {
    const text = String(cell)
    return text.length > maxWidth ? `${text.slice(0, maxWidth - 1)}…` : text
  }))
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)))
  const line = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()
  return [colour.bold(line(headers)), ...cells.map(line)].join('\n')
}

export const ok = (text: string): string => colour.green(text)
export const bad = (text: string): string => colour.red(text)
