import { describe, expect, it, vi } from 'vitest'
import { addColumnsSql } from '../../scripts/ddl.js'
import { createAffiliateClient } from '../../src/client/index.js'
import { campaignCreate, campaignUpdate } from '../../src/schemas/campaigns.js'
import { jsonSchemaOf } from '../../src/schemas/validate.js'
import { createAffiliateService, memoryKeyStore, memoryStorage } from '../../src/index.js'
import { campaignInput, KEY_A, manualClock, setup, WS_A } from '../support/helpers.js'

// A field added to a model's description, and nowhere else, is in the request schemas, the API's
// answers, the OpenAPI document, the typed API, the HTTP client, the admin's form and the new
// column's DDL. The
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
    campaigns: { ...campaigns, fields: { ...campaigns.fields, tagline } },
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
    expect(refused.body.errors).toEqual([
      { type: 'field', msg: 'tagline must have at most 80 characters', path: 'tagline', location: 'body' },
    ])
  })

  it('is in the OpenAPI document: the create and update bodies and the Campaign answer', async () => {
    const { service } = setup()
    const document = await (await service.fetch(new Request('http://test.local/api/v1/openapi.json'))).json()
    const body = (path: string, method: string) => document.paths[path][method].requestBody.content['application/json'].schema
    expect(body('/campaigns', 'post').properties.tagline).toEqual({ type: 'string', maxLength: 80 })
    expect(body('/campaigns', 'put').properties.tagline).toEqual({ type: 'string', maxLength: 80 })
    expect(document.components.schemas.Campaign.properties.tagline).toEqual({
      type: 'string',
      description: 'One line shown under the campaign name.',
    })
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

  it("is in the admin's campaign form, which takes it through the same schema", async () => {
    const admin = adminBrowser()
    const form = await admin.get('/admin/campaigns/new')
    expect(form).toMatch(/<label for="tagline">Tagline <span class="hint">\(optional\)<\/span><\/label>/)
    expect(form).toContain('<input type="text" id="tagline" name="tagline" maxlength="80" aria-describedby="tagline-hint" value="">')
    const sent = { campaignName: 'Summer', url: 'https://shop.example.com', commissionType: 'fixed', amount: '5' }
    const refused = await admin.post('/admin/campaigns/new', { ...sent, tagline: 'x'.repeat(81) })
    expect(refused.status).toBe(400)
    expect(refused.text).toContain('<p class="field-error" id="tagline-error">tagline must have at most 80 characters</p>')
    expect((await admin.post('/admin/campaigns/new', { ...sent, tagline: 'From the dashboard' })).status).toBe(303)
    const [made] = (await admin.service.api.campaigns.list({ workspaceId: WS_A })).items
    expect(made).toMatchObject({ campaignName: 'Summer', tagline: 'From the dashboard' })
    expect(await admin.get(`/admin/campaigns/edit?campaignId=${made!.id}`)).toContain(
      'name="tagline" maxlength="80" aria-describedby="tagline-hint" value="From the dashboard"',
    )
  })

  it("has its column's DDL for a new migration", () => {
    expect(addColumnsSql('sqlite', 'campaigns', ['tagline'])).toBe("ALTER TABLE campaigns ADD COLUMN tagline TEXT NOT NULL DEFAULT '';")
  })
})

/** A signed-in owner's browser on the admin: its cookies, and the CSRF token of the last page. */
function adminBrowser() {
  const service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([]),
    clock: manualClock(),
    admin: { authorize: () => ({ userId: 'owner', workspaceIds: [WS_A] }), secret: 's'.repeat(32) },
  })
  const jar = new Map<string, string>()
  let token = ''
  const send = async (path: string, init: RequestInit = {}) => {
    const cookie = [...jar].map((pair) => pair.join('=')).join('; ')
    const response = await service.fetch(new Request(`http://x${path}`, { ...init, headers: { ...init.headers, cookie } }))
    for (const line of response.headers.getSetCookie()) {
      const [name, value] = line.split(';')[0]!.split(/=(.*)/)
      jar.set(name!, value!)
    }
    const text = await response.text()
    token = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? token
    return { status: response.status, text }
  }
  return {
    service,
    get: async (path: string) => (await send(path)).text,
    post: (path: string, fields: Record<string, string>) =>
      send(path, {
        method: 'POST',
        body: new URLSearchParams({ csrf: token, ...fields }),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
  }
}
