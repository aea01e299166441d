import { describe, expect, it } from 'vitest'
import { AffiliateError } from '../src/index.js'
import { refusal } from '../src/errors.js'

describe('refusal', () => {
  it('is an AffiliateError like any other, without the stack nobody reads, and leaves the stack limit as it was', () => {
    const limit = Error.stackTraceLimit
    const error = refusal(429, 'Rate limit exceeded. Please retry later.', undefined, { 'Retry-After': '1' })
    expect(error).toBeInstanceOf(AffiliateError)
    expect(error).toMatchObject({ name: 'AffiliateError', status: 429, message: 'Rate limit exceeded. Please retry later.', headers: { 'Retry-After': '1' } })
    expect(error.stack).toBe('AffiliateError: Rate limit exceeded. Please retry later.')
    expect(Error.stackTraceLimit).toBe(limit)
    expect(new AffiliateError(404, 'x').stack).toMatch(/\n\s+at /)
  })
})
