import { describe, expect, it, vi } from 'vitest'
import { ERROR_CODES } from '../../src/error-codes.js'
import { setup, WS_A } from '../support/helpers.js'

// `stripe` is an optional peer dependency: a host that has not installed it and gets a Stripe event
// answers 503 `provider_unavailable` naming the install command, which Stripe delivers again later,
// and tells its onError. Here the package fails to load as it does when it is not installed (the
// packed-tarball test in test/package/ installs the package without it for real).
const notInstalled = vi.hoisted(() => ({ on: true }))
vi.mock('stripe', async (original) => {
  if (notInstalled.on) throw new Error("Cannot find package 'stripe' imported from affiliate-service")
  return original()
})

describe('a Stripe event without the stripe package', () => {
  it('is answered 503 provider_unavailable with the install command, reported to onError, and nothing is recorded', async () => {
    const t = setup()
    const integration = await t.api.integrations.create({ workspaceId: WS_A, provider: 'stripe', signingSecret: 'whsec_test_missing' })
    const post = () =>
      t.service.fetch(
        new Request(`http://test.local${integration.endpointPath}`, {
          method: 'POST',
          headers: { 'stripe-signature': 't=1,v1=00', 'content-type': 'application/json' },
          body: JSON.stringify({ id: 'evt_1', object: 'event', type: 'invoice.paid', data: { object: { object: 'invoice' } } }),
        }),
      )

    const response = await post()
    expect(response.status).toBe(ERROR_CODES.provider_unavailable[0])
    const body = await response.json()
    expect(body).toMatchObject({ status: 503, code: 'provider_unavailable' })
    expect(body.message).toContain('npm install stripe')
    expect(t.errors).toHaveLength(1)
    const reported = t.errors[0] as Error
    expect(reported.message).toContain('npm install stripe')
    // The import's own failure is kept as the cause (vitest wraps the one its mock threw).
    const causes: string[] = []
    for (let cause = reported.cause; cause instanceof Error; cause = cause.cause) causes.push(cause.message)
    expect(causes.join('\n')).toContain("Cannot find package 'stripe'")
    expect((await t.api.integrations.events({ integrationId: integration.integrationId })).items).toEqual([])

    // Once the package can be loaded, the next delivery is verified as any other (here: a bad signature).
    notInstalled.on = false
    vi.resetModules()
    const retried = await post()
    expect(retried.status).toBe(400)
    expect((await retried.json()).code).toBe('invalid_signature')
    expect(t.errors).toHaveLength(1)
  })
})
