/** PEM trust anchors for --tsa-ca. */
import {readFile} from 'node:fs/promises'
import {AuditError} from '../core/errors.js'

/** Splits a PEM bundle into its certificates (a --tsa-ca file may hold several). */
export function splitPem(text: string): string[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  if (blocks.length === 0) throw new Error('no PEM certificate found')
  return blocks.map((block) => `${block}\n`)
}

/** The certificates of a PEM file; throws the file system's or splitPem's error. */
export async function readPemFile(file: string): Promise<string[]> {
  return splitPem(await readFile(file, 'utf8'))
}

/** The certificates of `--tsa-ca FILE`; an unreadable or empty file is an input error (exit 2). */
export async function readTsaCa(file: string): Promise<string[]> {
  try {
    return await readPemFile(file)
  } catch (error) {
    throw new AuditError('validation_error', `cannot use --tsa-ca ${file}: ${(error as Error).message}`)
  }
}
