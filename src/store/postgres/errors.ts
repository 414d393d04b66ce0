/** A database that cannot be used: said in one sentence (the CLI exits 2 with it). */
export class DatabaseError extends Error {
  constructor(message: string, options?: {cause?: unknown}) {
    super(message, options)
    this.name = 'DatabaseError'
  }
}
