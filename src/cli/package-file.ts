/** Reads an `.atrail.json` evidence package from disk for the offline commands. */
import {readFile} from 'node:fs/promises'
import type {EvidencePackage} from '../core/evidence/package.js'

export async function readPackageFile(file: string): Promise<EvidencePackage> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new Error(`cannot read package ${file}: ${(error as Error).message}`)
  }
  try {
    return JSON.parse(text) as EvidencePackage
  } catch (error) {
    throw new Error(`package ${file} is not JSON: ${(error as Error).message}`)
  }
}
