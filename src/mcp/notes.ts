/**
 * What the proxy says on stderr, where an MCP client shows or logs a server's stderr: one line per
 * notice, prefixed with the command's name, so it stands apart from the server's own output. A
 * side that keeps sending bad input cannot flood it: after MAX_REPEATS lines of the same kind,
 * that kind is counted silently and the count said at the end.
 */
const PREFIX = 'audit-trail mcp-proxy: '
const MAX_REPEATS = 20

export class Notes {
  readonly #write: (text: string) => void
  readonly #counts = new Map<string, number>()

  constructor(write: (text: string) => void = (text) => process.stderr.write(text)) {
    this.#write = write
  }

  /** Says `line`; `kind` (default: the line itself without numbers) groups repeats. */
  say(line: string, kind = line.replace(/\d+/g, '#')): void {
    const count = (this.#counts.get(kind) ?? 0) + 1
    this.#counts.set(kind, count)
    if (count <= MAX_REPEATS) this.#write(`${PREFIX}${line}\n`)
    if (count === MAX_REPEATS) this.#write(`${PREFIX}(further notices like the last one are counted, not shown)\n`)
  }

  /** Says how many notices of each kind were held back. */
  summarise(): void {
    for (const [kind, count] of this.#counts)
      if (count > MAX_REPEATS) this.#write(`${PREFIX}${count - MAX_REPEATS} more notice(s) like: ${kind}\n`)
  }
}
