/**
 * Collects every problem of a policy document before failing, so one 400 (docs/api.md,
 * Policy: "bad parameter: 400 naming the rule") tells the author everything at once. The message
 * names the first failing rule; `details` carries one entry per problem with its field path.
 */
import {AuditError, type FieldError} from '../errors.js'

/** Records one problem: `field` is the full path (`policies[2].max`), `message` the complaint. */
export type Report = (field: string, message: string) => void

export class Problems {
  readonly details: FieldError[] = []
  private firstSubject = ''

  /** A reporter whose problems are attributed to `subject` (`policy rule "pii"`) in the message. */
  reporterFor(subject: string): Report {
    return (field, message) => {
      if (this.details.length === 0) this.firstSubject = subject
      this.details.push({field, message})
    }
  }

  throwIfAny(): void {
    const first = this.details[0]
    if (!first) return
    const more = this.details.length - 1
    const prefix = this.firstSubject ? `${this.firstSubject}: ` : ''
    const suffix = more > 0 ? ` (and ${more} more problem${more === 1 ? '' : 's'})` : ''
    throw new AuditError('validation_error', `${prefix}${first.field} ${first.message}${suffix}`, {
      details: this.details,
    })
  }
}

/** True for a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Reports every key of `value` not in `allowed`: nothing an author writes is silently ignored. */
export function reportUnknownKeys(
  value: Record<string, unknown>,
  allowed: readonly string[],
  path: string,
  report: Report,
): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) report(joinPath(path, key), `is not a known field (allowed: ${allowed.join(', ')})`)
  }
}

export function joinPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key
}
