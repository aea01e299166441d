import fc from 'fast-check'
import { describe, it } from 'vitest'
import { memoryStorage, type Storage } from '../../src/index.js'
import { apiCampaignInput, setup, WS_A } from '../support/helpers.js'
import { eventCount, plans, programs, runProgram, type World } from '../support/stripe-fuzz.js'

// A fuzzer over random Stripe event programs (test/support/stripe-fuzz.ts): customers brought by a
// code, by a signup then a checkout, by two racing checkouts, or by no one; invoices paid before or
// after their customer's attribution, in both shapes, refunded in part, in full or twice; every
// event delivered once or twice, shuffled, several at a time. The commissions must equal what the
// oracle works out from the same events, nothing applied twice, no 500; with storage failures
// injected, a 500 only for those, and the end the same once Stripe's redeliveries succeed.

const SECRET = 'whsec_fuzz_5d2c8a1f'

/** A memory storage failing a write transaction (after its work, so it rolls back) with `rate` odds, from a seeded sequence, once armed. */
function failing(rate: number, seed: number): { storage: Storage; injected: () => number; arm: () => void } {
  const storage = memoryStorage()
  let state = seed >>> 0 || 1
  let injected = 0
  let armed = false
  const next = () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 2 ** 32
  }
  return {
    injected: () => injected,
    arm: () => void (armed = true),
    storage: {
      transaction: (work, options) =>
        storage.transaction(async (tx) => {
          const answer = await work(tx)
          if (armed && !options?.readOnly && next() < rate) {
            injected++
            throw new Error('injected storage failure')
          }
          return answer
        }, options),
    },
  }
}

async function world(rate: number, seed: number): Promise<World> {
  const { storage, injected, arm } = failing(rate, seed)
  const t = setup({ storage })
  const percent = 20
  const campaign = await t.api.campaigns.create(apiCampaignInput({ amount: percent, payoutTerm: 0 }))
  const affiliates = []
  for (const code of ['ANN-2026', 'BOB-2026']) {
    const affiliate = await t.api.affiliates.create({ email: `${code.toLowerCase()}@example.com`, campaignId: campaign.id })
    await t.api.links.create({ affiliateId: affiliate.id, referralCode: code })
    affiliates.push({ id: affiliate.id, code })
  }
  const integration = await t.api.integrations.create({ workspaceId: WS_A, provider: 'stripe', signingSecret: SECRET, livemode: false })
  return {
    api: t.api,
    workspaceId: WS_A,
    percent,
    affiliates,
    endpointPath: integration.endpointPath,
    secret: SECRET,
    targets: [(request) => t.service.fetch(request)],
    now: () => Math.floor(t.clock.now() / 1000),
    injected,
    arm,
  }
}

const runs = fc
  .tuple(programs, fc.integer({ min: 1, max: 2 ** 31 - 1 }))
  .chain(([program, seed]) => plans(eventCount(program), 1).map((plan) => ({ program, plan, seed })))

describe('Stripe events against an oracle', () => {
  it("any order, duplicates and concurrent deliveries: the oracle's commissions, nothing applied twice, no 500", async () => {
    await fc.assert(
      fc.asyncProperty(runs, async ({ program, plan, seed }) => runProgram(await world(0, seed), program, plan, 'f')),
      { numRuns: 60 },
    )
  }, 600_000)

  it('with storage failures injected: a 500 only for those, and the same end once each is delivered again', async () => {
    await fc.assert(
      fc.asyncProperty(runs, async ({ program, plan, seed }) => runProgram(await world(0.15, seed), program, plan, 'f')),
      { numRuns: 40 },
    )
  }, 600_000)
})
