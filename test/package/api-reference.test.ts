import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { apiReference } from '../../scripts/api-reference.js'
import { ERROR_CODES } from '../../src/error-codes.js'
import { routes } from '../../src/http/routes.js'

describe('docs/api.md, the HTTP API reference', () => {
  it('is what the route table makes today (run `npm run docs:api` after changing a route)', () => {
    expect(readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8')).toBe(apiReference())
  })

  it('has a section for every route of the table', () => {
    const text = apiReference()
    for (const route of routes) expect(text).toContain(`## ${route.method} ${route.path}\n`)
  })

  it('has a row for every error code with its status and meaning, and routes.md points to it', () => {
    const text = apiReference()
    for (const [code, [status, meaning]] of Object.entries(ERROR_CODES)) {
      expect(text).toContain(`| \`${code}\` | ${status} | ${meaning.replace(/\|/g, '\\|')} |\n`)
    }
    expect(readFileSync(new URL('../../docs/routes.md', import.meta.url), 'utf8')).toContain('(api.md#error-codes)')
  })
})
