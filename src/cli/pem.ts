/** PEM trust anchors for --tsa-ca. */
import {readFile} from 'node:fs/promises'
import {AuditError} from '../core/errors.js'
import {splitCertificates} from '../core/timestamp/index.js'
import {cannotRead} from './next-step.js'

/** The certificates of a PEM file (a --tsa-ca file may hold several); none is an error. */
export async function readPemFile(file: string): Promise<string[]> {
  const certificates = splitCertificates([await readFile(file, 'utf8')])
  if (certificates.length === 0) throw new Error('no PEM certificate found')
  return certificates
}

const TSA_CA = "the PEM file of the TSA's CA certificate(s)"

/** The certificates of `--tsa-ca FILE`; an unreadable or empty file is an input error (exit 2). */
export async function readTsaCa(file: string): Promise<string[]> {
  try {
    return await readPemFile(file)
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).syscall
      ? cannotRead(file, error, TSA_CA)
      : `${(error as Error).message}: give ${TSA_CA}`
    throw new AuditError('validation_error', `cannot use --tsa-ca ${file}: ${reason}`)
  }
}
