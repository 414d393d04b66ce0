/**
 * Signed history only extends. Before the log signs a statement about its tree (an RFC 3161
 * timestamp, a checkpoint), the tree to be signed must be proved, by RFC 9162 section 2.1.4
 * consistency proofs over the hashes recomputed from stored content, to extend the trees of the
 * statements signed before it. Otherwise a new signature would anchor an altered history and
 * erase the evidence that it was altered.
 *
 * The findings are kept per kind of statement, so that /healthz and the dashboard can say that
 * history was rewritten without recomputing anything.
 */
import {AuditError} from '../core/errors.js'
import type {IntegrityService} from './integrity.js'

/** A statement the log signed about one of its trees. */
export interface SignedStatement {
  /** What signed it, one word: 'timestamp', 'checkpoint'. */
  kind: string
  tree_size: number
  /** The tree's root, hex. */
  root: string
  /** When it was signed (ISO 8601), as the signature says. */
  signed_at: string
}

/** Stored history that no longer extends a signed statement. */
export interface HistoryRewrite {
  kind: string
  /** The earliest statement the stored events no longer extend. */
  statement: SignedStatement
  /** One sentence: which statement, and what does not hold. */
  message: string
}

export class SignedHistory {
  readonly #integrity: IntegrityService
  readonly #rewrites = new Map<string, HistoryRewrite>()

  constructor(options: {integrity: IntegrityService}) {
    this.#integrity = options.integrity
  }

  /**
   * The earliest of `statements` (all of one kind, oldest first) that the first `size` stored
   * events do not extend, or undefined when they extend every one. Remembered for `rewrites`.
   */
  async check(kind: string, statements: readonly SignedStatement[], size: number): Promise<HistoryRewrite | undefined> {
    const failures = await this.#integrity.extensionFailures(statements, size)
    const at = failures.findIndex((failure) => failure !== undefined)
    if (at < 0) {
      this.#rewrites.delete(kind)
      return undefined
    }
    const statement = statements[at]!
    const rewrite = {
      kind,
      statement,
      message:
        `history was rewritten since the ${kind} of ${statement.signed_at} ` +
        `(tree size ${statement.tree_size}): ${failures[at]!}`,
    }
    this.#rewrites.set(kind, rewrite)
    return rewrite
  }

  /**
   * Refuses (409 conflict) to sign the tree of `size` events unless it extends every one of
   * `statements`; `remedy` ends the message (how an operator starts over after a restore).
   */
  async assertExtends(kind: string, statements: readonly SignedStatement[], size: number, remedy: string) {
    const rewrite = await this.check(kind, statements, size)
    if (rewrite) {
      throw new AuditError('conflict', `refusing to sign the tree of ${size} events: ${rewrite.message}; ${remedy}`)
    }
  }

  /** Signed history of `kind` starts over (the operator's explicit reset): forget its finding. */
  startOver(kind: string): void {
    this.#rewrites.delete(kind)
  }

  /** What the latest checks found, one per kind of statement; empty when history only extended. */
  rewrites(): HistoryRewrite[] {
    return [...this.#rewrites.values()]
  }
}
