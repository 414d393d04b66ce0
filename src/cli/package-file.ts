/** Reads an `.atrail.json` evidence package from disk for the offline commands. */
import {createReadStream} from 'node:fs'
import {PACKAGE_FORMAT, PACKAGE_VERSION, type EvidencePackage} from '../core/evidence/package.js'
import {PackageParser} from '../core/evidence/package-parser.js'

/**
 * Streams the file through PackageParser: the package is never one string, so its size is not
 * bounded by V8's string limit and memory holds the parsed package plus one chunk.
 *
 * JSON that does not say it is an evidence package (its `format` and `version`) is an invalid
 * input file (exit 2), not a package that failed verification (exit 1): verification then checks
 * everything else, so a package whose content was changed is still reported as invalid (exit 1).
 */
export async function readPackageFile(file: string): Promise<EvidencePackage> {
  const parser = new PackageParser()
  try {
    for await (const chunk of createReadStream(file, {highWaterMark: 4 * 1024 * 1024})) parser.push(chunk as Buffer)
  } catch (error) {
    if (error instanceof SyntaxError || (error as Error).name === 'PackageSyntaxError') throw notJson(file, error as Error)
    throw new Error(`cannot read package ${file}: ${(error as Error).message}`)
  }
  let pkg: EvidencePackage
  try {
    pkg = parser.finish()
  } catch (error) {
    throw notJson(file, error as Error)
  }
  const tagged = pkg !== null && typeof pkg === 'object' && !Array.isArray(pkg) && pkg.format === PACKAGE_FORMAT && pkg.version === PACKAGE_VERSION
  if (!tagged) throw new Error(`${file} is not an evidence package (no "format": "${PACKAGE_FORMAT}", "version": ${PACKAGE_VERSION})`)
  return pkg
}

function notJson(file: string, error: Error): Error {
  return new Error(`package ${file} is not JSON: ${error.message}`)
}
