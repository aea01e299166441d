// The served OpenAPI document through a code generator, as a client's build would use it:
// openapi-typescript makes the types, and the TypeScript compiler checks a small file against them,
// where a right body compiles and each wrong one is a type error (`@ts-expect-error` fails the check
// when a wrong body compiles, as every body did while the generator typed these bodies `unknown`).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { afterAll, expect, it } from 'vitest'
import { setup } from '../support/helpers.js'

const dir = join(import.meta.dirname, '..', '..', '.tmp', `openapi-types-${process.pid}`)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

const CHECK = `import type { paths } from './api.js'

type Body<P extends keyof paths> = paths[P] extends { post: { requestBody: { content: { 'application/json': infer B } } } } ? B : never
type CommissionBody = Body<'/commissions'>
type ReferredUserBody = Body<'/referred-users'>

const campaignId = '8d6f4b2a-1c3e-4a5b-8c7d-9e0f1a2b3c4d'
const affiliateId = '5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c'
const clickId = '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9'

export const byAffiliate: CommissionBody = { campaignId, referredUser: 'buyer@example.com', amount: 49.5, affiliateId }
export const byClick: CommissionBody = { campaignId, referredUser: 'buyer@example.com', amount: '49.50', clickId }
export const both: CommissionBody = { campaignId, referredUser: 'buyer@example.com', amount: 1, affiliateId, clickId, status: 'paid' }
// @ts-expect-error not an object at all
export const notAnObject: CommissionBody = 42
// @ts-expect-error neither affiliateId nor clickId
export const neither: CommissionBody = { campaignId, referredUser: 'buyer@example.com', amount: 49.5 }
// @ts-expect-error amount is required
export const noAmount: CommissionBody = { campaignId, referredUser: 'buyer@example.com', affiliateId }
// @ts-expect-error status is one of the commission statuses
export const badStatus: CommissionBody = { campaignId, referredUser: 'buyer@example.com', amount: 1, affiliateId, status: 'done' }
// @ts-expect-error no such field
export const unknownField: CommissionBody = { campaignId, referredUser: 'buyer@example.com', amount: 1, affiliateId, bogus: true }

export const referred: ReferredUserBody = { referredTo: 'friend@example.com', affiliateId }
export const referredByClick: ReferredUserBody = { referredTo: 'friend@example.com', clickId }
// @ts-expect-error not an object at all
export const referredNotAnObject: ReferredUserBody = 'friend@example.com'
// @ts-expect-error neither affiliateId nor clickId
export const referredNeither: ReferredUserBody = { referredTo: 'friend@example.com' }
// @ts-expect-error referredTo is required
export const referredNoAddress: ReferredUserBody = { affiliateId }
`

it('generates types with openapi-typescript in which a wrong POST /commissions or /referred-users body is a type error', async () => {
  const { service } = setup()
  const document = await (await service.fetch(new Request('http://test.local/api/v1/openapi.json'))).json()
  const types = astToString(await openapiTS(document))
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'api.ts'), types)
  writeFileSync(join(dir, 'check.ts'), CHECK)

  const program = ts.createProgram([join(dir, 'check.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts'],
    types: [],
  })
  const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file
      ? `${diagnostic.file.fileName.slice(dir.length + 1)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}`
      : ''
    return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`
  })
  expect(problems).toEqual([])
}, 60_000)
