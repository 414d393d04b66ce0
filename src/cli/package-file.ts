/** Reads an `.atrail.json` evidence package from disk for the offline commands. */
import {createReadStream} from 'node:fs'
import type {EvidencePackage} from '../core/evidence/package.js'
import {PackageParser} from '../core/evidence/package-parser.js'

/**
 * Streams the file through PackageParser: the package is never one string, so its size is not
 * bounded by V8's string limit and memory holds the parsed package plus one chunk. JSON of another
 * shape is returned as it is: `verify --package` reports it as a failed check (CONTRACT.md
 * section 5: exit 1 with the first failure named).
 */
export async function readPackageFile(file: string): Promise<EvidencePackage> {
  const parser = new PackageParser()
  try {
    for await (const chunk of createReadStream(file, {highWaterMark: 4 * 1024 * 1024})) parser.push(chunk as Buffer)
  } catch (error) {
    if (error instanceof SyntaxError || (error as Error).name === 'PackageSyntaxError') throw notJson(file, error as Error)
    throw new Error(`cannot read package ${file}: ${(error as Error).message}`)
  }
  try {
    return parser.finish()
  } catch (error) {
    throw notJson(file, error as Error)
  }
}

function notJson(file: string, error: Error): Error {
  return new Error(`package ${file} is not JSON: ${error.message}`)
}
