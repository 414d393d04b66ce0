import {expect} from 'chai'
import {AuditError} from '../../src/core/errors.js'

/** The AuditError a call throws (fails the test when it throws nothing or something else). */
export function thrownAuditError(call: () => unknown): AuditError {
  try {
    call()
  } catch (error) {
    expect(error).to.be.instanceOf(AuditError)
    return error as AuditError
  }
  expect.fail('expected an AuditError')
}
