/** Sizes given on the command line: bytes, or a number with a binary unit (`64KiB`, `16MiB`, `1GiB`). */
const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
}

/** The number of bytes `text` names, or undefined when it names none. */
export function parseByteSize(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text)
  if (!match) return undefined
  const unit = UNITS[match[2]!.toLowerCase()]
  if (unit === undefined) return undefined
  const bytes = Math.floor(Number(match[1]) * unit)
  return Number.isSafeInteger(bytes) ? bytes : undefined
}
