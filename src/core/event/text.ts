/**
 * Rules for the strings of an event (docs/api.md). Lengths are counted in Unicode code points
 * (what a person calls characters), not UTF-16 code units or UTF-8 bytes: an emoji counts as one.
 */

// String.prototype.isWellFormed is ES2024 (Node 20 has it); the project's lib is ES2022.
type WellFormedCheck = {isWellFormed(): boolean}

/**
 * True when the string has no unpaired UTF-16 surrogate. RFC 8785 section 3.1 requires I-JSON
 * (RFC 7493 section 2.1), which forbids them, and they have no UTF-8 encoding to hash.
 */
export function isWellFormedText(text: string): boolean {
  return (text as unknown as WellFormedCheck).isWellFormed()
}

/** Number of Unicode code points of a well-formed string. */
export function countCodePoints(text: string): number {
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    // A high surrogate followed by a low one is a single code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
    }
    count++
  }
  return count
}

/**
 * The "control characters" of docs/api.md: Unicode's general category Cc, i.e. the C0
 * controls U+0000..U+001F, DEL U+007F and the C1 controls U+0080..U+009F (NEL, CSI, ...).
 * Global, for `replace`; `hasControlCharacter` tests one string.
 */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g
const CONTROL_CHARACTER = new RegExp(CONTROL_CHARACTERS.source)

export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text)
}

export interface TextRule {
  max: number
  allowEmpty?: boolean
  noControl?: boolean
}

/** The problem with a string value under a rule, or undefined when it satisfies the rule. */
export function checkText(value: unknown, rule: TextRule): string | undefined {
  if (typeof value !== 'string') return 'must be a string'
  if (!isWellFormedText(value)) return 'must not contain unpaired surrogates'
  if (value.length === 0 && !rule.allowEmpty) return 'must not be empty'
  // A code point takes one or two code units, so `length` bounds the count from above.
  if (value.length > rule.max && countCodePoints(value) > rule.max) return `must be at most ${rule.max} characters`
  if (rule.noControl && hasControlCharacter(value)) return 'must not contain control characters'
  return undefined
}
