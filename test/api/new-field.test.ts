import { describe, expect, it, vi } from 'vitest'
import { addColumnsSql } from '../../scripts/ddl.js'
import { createAffiliateClient } from '../../src/client/index.js'
import { campaignCreate, campaignUpdate } from '../../src/schemas/campaigns.js'
import { jsonSchemaOf } from '../../src/schemas/validate.js'
import { campaignInput, KEY_A, setup } from '../support/helpers.js'

// A field added to a model's description, and nowhere else, is in the request schemas, the API's
// answers, the OpenAPI document, the typed API, the HTTP client and the new column's DDL. The
// fixture is the campaign description with one more field, `tagline`, put in place of the real
// one for this file: every module of the service derives from the description it sees.

vi.mock('../../src/domain/descriptions/campaigns.js', async (original) => {
  const real = await original<typeof import('../../src/domain/descriptions/campaigns.js')>()
  const { text: textCheck } = await import('../../src/domain/checks.js')
  const { text } = await import('../../src/domain/descriptions/fields.js')
  const tagline = text({
    description: 'One line shown under the campaign name.',
    input: textCheck(80),
    create: 'optional',
    update: 'optional',
    default: '',
    form: { label: 'Tagline', group: 'Campaign', hint: 'Shown under the name in the portal.' },
  })
  const { campaigns } = real
  return {
    ...real,
    campaigns: {
      ...campaigns,
      fields: { ...campaigns.fields, tagline },
      answers: { campaign: [...campaigns.answers.campaign, 'tagline'] },
    },
  }
})

describe('a field added to the campaign description only', () => {
  it('is in the create and update schemas, checked by its own input', () => {
    expect(campaignCreate.fields.has('tagline')).toBe(true)
    expect(campaignUpdate.fields.has('tagline')).toBe(true)
    expect(jsonSchemaOf(campaignCreate)).toMatchObject({ properties: { tagline: { type: 'string', maxLength: 80 } } })
  })

  it('is taken and answered by the API, its default stored when left out', async () => {
    const { call } = setup()
    const made = await call('POST', '/campaigns', { body: campaignInput({ tagline: 'Twenty percent, forever' }) })
    expect(made.status).toBe(201)
    expect(made.body.data.tagline).toBe('Twenty percent, forever')
    const plain = await call('POST', '/campaigns', { body: campaignInput() })
    expect(plain.body.data.tagline).toBe('')
    const changed = await call('PUT', `/campaigns?campaignId=${plain.body.data.id}`, { body: { tagline: 'New' } })
    expect(changed.body.data.tagline).toBe('New')
    const refused = await call('PUT', `/campaigns?campaignId=${plain.body.data.id}`, { body: { tagline: 'x'.repeat(81) } })
    expect(refused.body.errors).toEqual([{ type: 'field', msg: 'tagline must have at most 80 characters', path: 'tagline', location: 'body' }])
  })

  it('is in the OpenAPI document: the create and update bodies and the Campaign answer', async () => {
    const { service } = setup()
    const document = await (await service.fetch(new Request('http://test.local/api/v1/openapi.json'))).json()
    const body = (path: string, method: string) => document.paths[path][method].requestBody.content['application/json'].schema
    expect(body('/campaigns', 'post').properties.tagline).toEqual({ type: 'string', maxLength: 80 })
    expect(body('/campaigns', 'put').properties.tagline).toEqual({ type: 'string', maxLength: 80 })
    expect(document.components.schemas.Campaign.properties.tagline).toEqual({ type: 'string', description: 'One line shown under the campaign name.' })
    expect(document.components.schemas.Campaign.required).toContain('tagline')
  })

  it('goes through the typed API and the HTTP client', async () => {
    const { service, api } = setup()
    const made = await api.campaigns.create({ ...campaignInput(), tagline: 'Typed' } as Parameters<typeof api.campaigns.create>[0])
    expect(made).toMatchObject({ tagline: 'Typed' })
    const client = createAffiliateClient({ baseUrl: 'http://test.local/api/v1', apiKey: KEY_A, fetch: (request) => service.fetch(request) })
    const updated = await client.campaigns.update(made.id, { tagline: 'Over HTTP' } as Parameters<typeof client.campaigns.update>[1])
    expect(updated).toMatchObject({ tagline: 'Over HTTP' })
  })

  it("has its column's DDL for a new migration", () => {
    expect(addColumnsSql('sqlite', 'campaigns', ['tagline'])).toBe("ALTER TABLE campaigns ADD COLUMN tagline TEXT NOT NULL DEFAULT '';")
  })
})
