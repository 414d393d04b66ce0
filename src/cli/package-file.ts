/** Reads an `.atrail.json` evidence package from disk for the offline commands. */
import {createReadStream} from 'node:fs'
import type {EvidencePackage} from '../core/evidence/package.js'
import type {PackageHashing} from '../threads/package-hashes.js'
import {InputError} from './input-error.js'
import {cannotRead} from './next-step.js'
import {DuplicateMemberError, PackageParser, PackageSyntaxError} from '../core/evidence/package-parser.js'

/**
 * Streams the file through PackageParser: the package is never one string, so its size is not
 * bounded by V8's string limit and memory holds the parsed package plus one chunk. JSON of another
 * shape is returned as it is: `verify --package` reports it as a failed check (exit 1 with the
 * first failure named, docs/verification.md). A member given twice throws an InputError
 * `invalid_package`; text that is not JSON one `not_json` naming the byte, line and column.
 * `hashing` is handed each run of events as it is parsed.
 */
export async function readPackageFile(file: string, hashing?: PackageHashing): Promise<EvidencePackage> {
  const parser = new PackageParser(hashing && ((text, count, before) => hashing.add(text, count, before)))
  try {
    for await (const chunk of createReadStream(file, {highWaterMark: 4 * 1024 * 1024})) parser.push(chunk as Buffer)
    return parser.finish()
  } catch (error) {
    if (error instanceof DuplicateMemberError) throw new InputError('invalid_package', error.message, {cause: error})
    if (error instanceof PackageSyntaxError) {
      const {line, column} = await lineAndColumn(file, error.offset)
      const where = `(line ${line}, column ${column})`
      throw new InputError('not_json', `package ${file} is not JSON: ${error.message} ${where}`, {cause: error})
    }
    if (error instanceof SyntaxError)
      throw new InputError('not_json', `package ${file} is not JSON: ${error.message}`, {cause: error})
    const expected = 'an .atrail.json evidence package (`audit-trail export` writes one)'
    throw new InputError('unreadable', cannotRead(file, error, expected), {cause: error})
  }
}

const NEWLINE = 0x0a
/** The first byte of a UTF-8 sequence (not 10xxxxxx): columns count characters, not bytes. */
const startsCharacter = (byte: number): boolean => (byte & 0xc0) !== 0x80

/** The 1-based line and column of a byte of the file, read again only when a package fails to parse. */
async function lineAndColumn(file: string, offset: number): Promise<{line: number; column: number}> {
  let line = 1
  let column = 1
  if (offset > 0) {
    for await (const chunk of createReadStream(file, {end: offset - 1, highWaterMark: 4 * 1024 * 1024})) {
      for (const byte of chunk as Buffer) {
        if (byte === NEWLINE) {
          line++
          column = 1
        } else if (startsCharacter(byte)) {
          column++
        }
      }
    }
  }
  return {line, column}
}
