// Two service instances, each with its own connection pool, on one PostgreSQL schema, are sent the
// same sale (one invoiceId) at the same moment, twice each, 15 rounds; then the same refund (one
// refundId). SPEC "Customers and conversions": a repeat of an invoiceId answers the first answer
// and changes nothing, across instances. The unique index on (workspaceId, invoiceId) of the sales
// decides; no instance reads first and then inserts.
import { expect, it } from 'vitest'
import { centsOf } from '../support/helpers.js'
import { RACE_KEY, racingOnPostgres } from '../support/race-suite.js'

const ROUNDS = 15

racingOnPostgres('Sales racing on PostgreSQL', 'salerace', (start) => {
  it('the same invoiceId sent four times at once to two instances makes one sale and one commission; every answer is the first', async () => {
    const { one, two, api, workspaceId, affiliate } = await start()
    const post = async (service: typeof one, path: string, body: unknown) => {
      const response = await service.fetch(
        new Request(`http://race.local/api/v1${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-auth-service': RACE_KEY },
          body: JSON.stringify(body),
        }),
      )
      return { status: response.status, body: (await response.json()) as { data: any; message: string } }
    }
    let expectedCents = 0
    for (let round = 1; round <= ROUNDS; round++) {
      const externalId = `user-${round}`
      await api.conversions.lead({ workspaceId, externalId, email: `buyer${round}@example.com`, affiliateId: affiliate.id })
      const sale = {
        workspaceId,
        externalId,
        amount: `${round + 10}.${String((round * 7) % 100).padStart(2, '0')}`,
        currency: 'USD',
        invoiceId: `in_${round}`,
      }
      const answers = await Promise.all([one, two, one, two].map((service) => post(service, '/conversions/sale', sale)))
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300)
      // One made it (201); the others answer what it answered (200).
      expect(
        answers.filter((a) => a.status === 201),
        `round ${round}`,
      ).toHaveLength(1)
      const made = answers.find((a) => a.status === 201)!.body.data
      for (const answer of answers) expect(answer.body.data).toEqual(made)
      const stored = await api.commissions.list({ workspaceId, limit: 100 })
      expect(stored.items.filter((c) => c.commissionId === made.commission.commissionId)).toHaveLength(1)
      expect(stored.pagination.total).toBe(round)
      expect((await api.customers.list({ workspaceId, limit: 100 })).items.find((c) => c.externalId === externalId)?.salesCount).toBe(1)
      expectedCents += centsOf(made.commission.amount)

      // The same refund, twice to each instance at once: taken once.
      const refund = { workspaceId, invoiceId: `in_${round}`, amount: '1.00', refundId: `re_${round}` }
      const refunds = await Promise.all([one, two, one, two].map((service) => post(service, '/conversions/refund', refund)))
      for (const answer of refunds)
        expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 200, body: { data: refunds[0]!.body.data } })
      const refunded = await api.commissions.get(made.commission.commissionId)
      // 30% of 1.00 taken, once.
      expect(centsOf(refunded.amount)).toBe(centsOf(made.commission.amount) - 30)
      expectedCents -= 30
    }
    expect(Math.round((await api.affiliates.get(affiliate.id)).totalEarnings * 100)).toBe(expectedCents)
  }, 120_000)
})
