/**
 * Concise problem details (RFC 9290 section 2): a CBOR map with `title` (-1) and `detail` (-2),
 * the error body of the SCRAPI resources (draft-ietf-scitt-scrapi, "Resources").
 */
import {decodeCbor, encodeCbor} from './cbor.js'

export const PROBLEM_MEDIA_TYPE = 'application/concise-problem-details+cbor'
const PROBLEM = {title: -1, detail: -2} as const

interface Problem {
  /** Short, the same for every occurrence of the problem (SCRAPI's titles where it names one). */
  title: string
  /** This occurrence, in enough detail to put it right. */
  detail: string
}

export function encodeProblem(problem: Problem): Uint8Array {
  return encodeCbor(
    new Map([
      [PROBLEM.title, problem.title],
      [PROBLEM.detail, problem.detail],
    ]),
  )
}

/** The title and detail of a problem details body (for clients and tests); undefined if it is none. */
export function decodeProblem(bytes: Uint8Array): Partial<Problem> | undefined {
  const map = decodeCbor(bytes)
  if (!(map instanceof Map)) return undefined
  const title = map.get(PROBLEM.title)
  const detail = map.get(PROBLEM.detail)
  return {
    ...(typeof title === 'string' ? {title} : {}),
    ...(typeof detail === 'string' ? {detail} : {}),
  }
}
