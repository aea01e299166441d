// An owner runs a program for fourteen months from the admin, in Chromium (issue 38): a campaign
// "20% for 12 months" made in the form, an applicant approved after reading their answers, a
// customer's subscription paid every month through signed Stripe events, a payout, a partial
// refund by Stripe after payment and one by hand before it, and a last payout. Each page is
// asserted on what it shows, checked with axe-core (no serious or critical violation), and
// photographed at desktop and phone widths under .tmp/admin-screens/ (looked at by hand).
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serve, type RunningServer } from '../../adapters/node.js'
import { createAffiliateService, memoryStorage, storageKeyStore, type AffiliateService } from '../../src/index.js'
import { DESKTOP, expectAccessible, photograph } from '../support/page-check.js'
import { checkoutSessionObject, deliver, paymentEvents, payment, stripeEvent, type Payment } from '../support/stripe-events.js'

const CHROMIUM = process.env.AFFILIATE_TEST_CHROMIUM ?? '/usr/bin/chromium'
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
const ROOT = join(import.meta.dirname, '..', '..')
const SCREENS = join(ROOT, '.tmp', 'admin-screens')
const TOKEN = 'year-owner-token-year-owner-token-0042'
const SIGNING_SECRET = 'whsec_owner_year_7c1d9e2a'
const WORKSPACE = '58585858-5858-4858-8858-585858585858'
const START = Date.UTC(2026, 0, 5, 9)
const HOUR = 3_600_000
/** The customer's subscription: paid on the 5th of each month, 49.00 USD, from January 2026. */
const paidAt = (month: number) => Date.UTC(2026, month, 5, 10)

let service: AffiliateService
let server: RunningServer
let origin: string
let context: BrowserContext
let page: Page
let moveTo: (at: number) => void
let now: () => number
const foreignRequests: string[] = []
const shot = new Set<string>()

/** axe-core (nothing serious or critical) and the page at both widths, once per page name. */
async function check(name: string): Promise<void> {
  if (shot.has(name)) return
  shot.add(name)
  await expectAccessible(page, { seriousOnly: true })
  await photograph(page, SCREENS, name)
}

/** The text of the page's main part, spaces collapsed: what the owner reads. */
// biome-ignore lint/performance/useDomNodeTextContent: the text as laid out (innerText separates blocks), what the owner reads
const mainText = async (): Promise<string> => ((await page.locator('main').innerText()) ?? '').replace(/\s+/g, ' ')

/** Signs in with the token (the session lasts 12 hours of the service's clock: months later, again). */
async function signIn(): Promise<void> {
  await page.goto(`${origin}/admin/sign-in`)
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${origin}/admin`)
}

/** Posts a Stripe event, signed now by the service's clock, to the integration's endpoint. */
async function stripe(endpointPath: string, event: unknown): Promise<string> {
  const answer = await deliver((request) => service.fetch(request), endpointPath, event, SIGNING_SECRET, Math.floor(now() / 1000))
  expect(answer.status, answer.text).toBe(200)
  return answer.text
}

/** Runs the payouts from the admin (preview, then the dialog) and marks the new payout paid with a reference; answers its amount. */
async function payOut(reference: string, expected: string): Promise<void> {
  await page.getByRole('link', { name: 'Payouts', exact: true }).click()
  await page.getByRole('button', { name: 'Preview a payout run' }).click()
  await page.getByRole('heading', { name: 'Payout preview' }).waitFor()
  expect(await mainText()).toContain(`dana@example.com ${expected} PAYPAL dana@pay.example.com`)
  await check('payout-preview')
  await page.getByRole('button', { name: 'Run payouts' }).click()
  await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click()
  await page.getByRole('status').filter({ hasText: 'Payouts made.' }).waitFor()
  await check('payouts')
  await page.getByRole('row').filter({ hasText: 'pending' }).getByRole('link', { name: expected }).click()
  await page.getByRole('heading', { name: `Payout ${expected}` }).waitFor()
  expect(await mainText()).toContain('Affiliate dana@example.com Paid to dana@pay.example.com')
  await check('payout-detail')
  await page.getByLabel('New status').selectOption('processing')
  await page.getByRole('button', { name: 'Update payout' }).click()
  await page.getByRole('status').filter({ hasText: 'Payout updated.' }).waitFor()
  await page.getByLabel('New status').selectOption('paid')
  await page.getByLabel('Reference of the payment').fill(reference)
  await page.getByRole('button', { name: 'Update payout' }).click()
  await page.getByRole('button', { name: 'Mark paid' }).click()
  await page.getByRole('status').filter({ hasText: 'Payout updated.' }).waitFor()
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not at ${CHROMIUM}: install it (apt-get install -y chromium) or set AFFILIATE_TEST_CHROMIUM`)
  rmSync(SCREENS, { recursive: true, force: true })
  mkdirSync(SCREENS, { recursive: true })
  const began = Date.now()
  let offset = 0
  now = () => START + offset + (Date.now() - began)
  moveTo = (at) => void (offset = at - START - (Date.now() - began))
  const storage = memoryStorage()
  const clock = { now: () => now() }
  const keyStore = storageKeyStore(storage, { clock })
  // The first start's key names the owner's workspace.
  await keyStore.create({ workspaceIds: [WORKSPACE], label: 'made by the first start' })
  service = createAffiliateService({
    storage,
    keyStore,
    clock,
    portal: {
      secret: 'year-secret-year-secret-year-secret-42',
      publicUrl: 'http://127.0.0.1',
      sendSignInLink: () => undefined,
      sendNotice: () => undefined,
      signInLimit: false,
    },
    admin: { tokenHash: createHash('sha256').update(TOKEN).digest('hex') },
  })
  server = await serve(service, { port: 0, hostname: '127.0.0.1' })
  origin = new URL(server.url).origin
  const profile = join(ROOT, '.tmp', 'e2e-profiles', `admin-year-${process.pid}-${Date.now()}`)
  rmSync(profile, { recursive: true, force: true })
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: DESKTOP })
  context.setDefaultTimeout(15_000)
  context.on('request', (request) => {
    if (!request.url().startsWith(origin)) foreignRequests.push(request.url())
  })
  page = context.pages()[0] ?? (await context.newPage())
}, 60_000)

afterAll(async () => {
  await context?.close()
  await server?.close()
  expect(foreignRequests).toEqual([])
})

describe('an owner’s fourteen months in the admin', () => {
  it('makes a campaign of 20% for 12 months, approves an applicant on their answers, is paid by Stripe for 14 months, refunds, pays out, and each page shows it', async () => {
    await signIn()
    await check('overview-empty')

    // The campaign, made in the form: 20% of each sale, for 12 months from the customer's first.
    await page.getByRole('link', { name: 'Campaigns', exact: true }).click()
    await page.getByRole('link', { name: 'New campaign' }).click()
    await check('campaign-new')
    await page.getByLabel('Name').fill('Budgetly partners')
    await page.getByLabel('Website URL').fill('https://budgetly.example.com/pricing')
    await page.getByLabel('Commission type').selectOption('percentage')
    await page.getByLabel('Amount', { exact: true }).fill('20')
    await page.getByLabel('Months a customer earns for').fill('12')
    await page.getByLabel('Minimum payout amount').fill('0')
    await page.getByLabel('Payout term (days)').fill('0')
    await page.getByLabel('Applicants need approval').check()
    await page.getByLabel('Ask applicants about themselves').check()
    await page.getByLabel('Default campaign of the workspace').check()
    await page.getByRole('button', { name: 'Create campaign' }).click()
    await page.getByRole('status').filter({ hasText: 'Campaign created.' }).waitFor()
    const list = await mainText()
    expect(list).toContain('Program name in e-mails to affiliates: Budgetly partners')
    expect(list).toContain('20% of each sale, for 12 months from a customer’s first paid sale')
    await check('campaigns')
    const [campaign] = (await service.api.campaigns.list({ limit: 10 })).items
    expect(campaign).toMatchObject({
      campaignName: 'Budgetly partners',
      commissionType: 'percentage',
      amount: 20,
      recurringMonths: 12,
      maxCommissionsPerCustomer: null,
      payoutTerm: 0,
    })
    await page.getByRole('link', { name: 'Budgetly partners' }).click()
    const rules = await mainText()
    for (const rule of [
      '20% of each sale, for 12 months from a customer’s first paid sale',
      'clicks credited for 30 days',
      'payable at once',
      'minimum payout 0.00 USD',
    ])
      expect(rules).toContain(rule)
    expect(await page.locator('#join-link').textContent()).toBe(`http://127.0.0.1/portal/join/${campaign!.id}`)
    expect(await page.locator('#link-format').textContent()).toBe('https://budgetly.example.com/pricing?ref=REF-AB12CD34')
    await page.getByRole('button', { name: 'Copy the join link' }).waitFor()
    await check('campaign-edit')

    // Someone applies through the portal's join page, answering its questions.
    await page.goto(`${origin}/portal/join/${campaign!.id}`)
    await page.getByLabel('E-mail address').fill('dana@example.com')
    await page.getByLabel('First name').fill('Dana')
    await page.getByLabel('Last name').fill('Reyes')
    await page.getByLabel('Website or social profile').fill('https://dana-saves.example.com')
    await page
      .getByLabel('How will you promote Budgetly partners?')
      .fill('A weekly newsletter on household budgets (12,000 readers) and a YouTube series comparing budgeting apps.')
    await page.getByRole('button', { name: 'Apply to join' }).click()
    await page.getByRole('heading', { name: 'Application received' }).waitFor()

    // The owner reads the answers on the queue, then on the applicant's page, and approves there.
    await page.goto(`${origin}/admin/affiliates?status=pending`)
    expect(await mainText()).toContain(
      'Website or social profile: https://dana-saves.example.com · How they will promote you: A weekly newsletter',
    )
    await check('applicants')
    await page.getByRole('link', { name: 'dana@example.com' }).click()
    const application = await mainText()
    expect(application).toContain('Their application')
    expect(application).toContain(
      'A weekly newsletter on household budgets (12,000 readers) and a YouTube series comparing budgeting apps.',
    )
    await check('applicant-detail')
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.getByRole('status').filter({ hasText: 'Applicants approved.' }).waitFor()
    await page.getByLabel('Payout e-mail').fill('dana@pay.example.com')
    await page.getByLabel('Payout method').selectOption('PAYPAL')
    await page.getByRole('button', { name: 'Save affiliate' }).click()
    await page.getByRole('status').filter({ hasText: 'Affiliate saved.' }).waitFor()
    const dana = (await service.api.affiliates.list({ email: 'dana@example.com', limit: 1 })).items[0]!
    expect(dana).toMatchObject({ isActive: true, payoutMethod: 'PAYPAL', firstName: 'Dana' })
    await service.api.links.create({ affiliateId: dana.id, referralCode: 'DANA' })

    // Stripe, connected in Settings (test mode: the fixtures are test-mode events), beside a webhook
    // (of an event this test never makes: nothing is sent off this machine).
    await service.api.webhooks.create({
      workspaceId: WORKSPACE,
      url: 'https://hooks.budgetly.example.com/affiliates',
      events: ['campaign.deleted'],
    })
    await page.getByRole('link', { name: 'Settings', exact: true }).click()
    await page.getByLabel('Signing secret').fill(SIGNING_SECRET)
    await page.getByLabel('Campaign (optional)').selectOption(campaign!.id)
    await page.getByLabel('Live mode').uncheck()
    await page.locator('#connect-description').fill('Budgetly')
    await page.getByRole('button', { name: 'Connect Stripe' }).click()
    await page.getByRole('status').filter({ hasText: 'Stripe connected.' }).waitFor()
    await check('integrations')
    const integration = (await service.api.integrations.list({ limit: 10 })).items[0]!
    const endpoint = integration.endpointPath

    // A customer checks out through Dana's code, then pays every month for 14 months.
    moveTo(paidAt(0) - HOUR)
    await stripe(
      endpoint,
      stripeEvent(
        'checkout.session.completed',
        checkoutSessionObject('cus_sam', { metadata: { referral: 'DANA' }, email: 'sam@example.com', created: Math.floor(now() / 1000) }),
        'evt_checkout_sam',
      ),
    )
    const payments: Payment[] = []
    const pay = async (month: number) => {
      moveTo(paidAt(month))
      const p = payment(`sam_${month + 1}`, 'cus_sam', { amountMinor: 49_00, paidAt: Math.floor(paidAt(month) / 1000) })
      payments.push(p)
      const events = paymentEvents(p, 0)
      await stripe(endpoint, events.paid)
      await stripe(endpoint, events.linked)
    }
    for (let month = 0; month < 3; month++) await pay(month)

    // The first payout: the first three months.
    moveTo(paidAt(2) + 2 * HOUR)
    await signIn()
    await payOut('PP-2026-03', '29.40 USD')

    // Stripe refunds half of February's payment after it was paid out: a clawback of -4.90.
    moveTo(paidAt(2) + 3 * HOUR)
    await stripe(endpoint, paymentEvents(payments[1]!, 24_50).refunded)
    for (let month = 3; month < 14; month++) await pay(month)
    moveTo(paidAt(13) + HOUR)
    await signIn()

    // Months 13 and 14 pay nothing: the event log says why.
    await page.goto(`${origin}/admin/settings/integrations/events?integrationId=${integration.integrationId}&status=ignored`)
    const ignored = await mainText()
    expect(ignored.match(/invoice\.paid ignored outside_recurring_window/g)).toHaveLength(2)
    await check('integration-events')

    // Commissions: twelve sales of 49.00 USD at 9.80, and February's clawback.
    await page.goto(`${origin}/admin/commissions?affiliateId=${dana.id}`)
    const commissions = await mainText()
    expect(commissions).toContain('1-13 of 13')
    // February's was paid, then half refunded: it stays paid, and its clawback takes the money back.
    expect(commissions.match(/49\.00 USD 9\.80 USD (paid|pending) sale/g)?.length).toBe(12)
    expect(commissions).toMatch(/— -4\.90 USD pending clawback/)
    expect(commissions).not.toContain('2027-01-05')
    await check('commissions')
    const sales = (
      await service.api.commissions.list({ affiliateId: dana.id, kind: 'sale', orderType: 'commissionDate', orderValue: 'ASC', limit: 20 })
    ).items
    expect(sales.map((m) => m.commissionDate.slice(0, 7))).toEqual(
      Array.from({ length: 12 }, (_, i) => `2026-${String(i + 1).padStart(2, '0')}`),
    )

    // February's commission: its sale, its payment's ids, its customer, and its history.
    const february = sales[1]!
    await page.goto(`${origin}/admin/commissions/detail?commissionId=${february.commissionId}`)
    const detail = await mainText()
    for (const shown of [
      'Sale amount 49.00 USD',
      'Currency USD',
      'Customer sam@example.com',
      'Invoice in_sam_2',
      'Charge ch_sam_2',
      'Subscription sub_sam_2',
      'Payment intent pi_sam_2',
      'Refunded after payment 4.90 USD',
      'Sale of 49.00 USD (invoice in_sam_2) earned this commission.',
      'Refunded after payment: clawback of -4.90 USD (pending, into the next payout).',
    ])
      expect(detail).toContain(shown)
    await check('commission-detail')

    // A refund by hand of May's (unpaid) commission: the confirmation says what the service will do.
    await page.goto(`${origin}/admin/commissions/detail?commissionId=${sales[4]!.commissionId}`)
    await page.getByRole('link', { name: 'Refund', exact: true }).click()
    await page.getByLabel('Amount to refund').fill('2')
    await check('commission-refund')
    await page.getByRole('button', { name: 'Review refund' }).click()
    await page.getByText('Refund 2.00 USD of 9.80 USD: the commission drops from 9.80 USD to 7.80 USD.').waitFor()
    await check('commission-refund-confirm')
    await page.getByRole('button', { name: 'Refund', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Commission refunded.' }).waitFor()
    await page.getByRole('heading', { name: 'Commission 7.80 USD' }).waitFor()

    // The last payout: April to December, less the refund and February's clawback.
    await payOut('PP-2027-02', '81.30 USD')
    const payouts = (await service.api.payouts.list({ affiliateId: dana.id, limit: 10 })).items
    expect(payouts.map((p) => [p.amount, p.status, p.externalReference]).sort()).toEqual([
      ['29.40', 'paid', 'PP-2026-03'],
      ['81.30', 'paid', 'PP-2027-02'],
    ])

    // The overview over the whole time (over a year: the reports take it, weekly).
    await page.goto(`${origin}/admin?from=2026-01-01&to=2027-02-28`)
    const overview = await mainText()
    expect(overview).toContain('From 2026-01-01 to 2027-02-28 (UTC), compared with the 424 days before.')
    expect(overview).toMatch(/Sales 12 new/)
    // Twelve sales of 49.00 earned (months 13 and 14 were sales too, but outside the 12 months: no commission, no revenue counted).
    expect(overview).toMatch(/Referred revenue 588\.00 USD new/)
    expect(overview).toMatch(/Commissions earned 110\.70 USD new/)
    expect(overview).toMatch(/Paid out 110\.70 USD new/)
    expect(overview).toContain('Clicks and earnings per week')
    await check('overview')
    // A range the reports refuse is said, not replaced.
    await page.goto(`${origin}/admin?from=2027-02-28&to=2026-01-01`)
    expect(await mainText()).toContain('That period cannot be shown: to must not be before from')

    // Dana's page: the balance after all of it.
    await page.goto(`${origin}/admin/affiliates/detail?affiliateId=${dana.id}`)
    expect(await mainText()).toContain('Paid out 110.70 USD')
    await check('affiliate-detail')
  }, 300_000)
})
