/**
 * The base of each area's one error class (docs/design.md, Errors): a closed set of codes that
 * callers branch on, and a message for people.
 */
export class CodedError<Code extends string> extends Error {
  constructor(
    readonly code: Code,
    message: string,
    options?: {cause?: unknown},
  ) {
    super(message, options)
  }
}
