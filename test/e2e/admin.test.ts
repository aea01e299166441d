// The admin dashboard in a real browser (Debian's Chromium through playwright-core, as the portal's
// tests): a program owner's whole day, with JavaScript on and off. Every page is checked with
// axe-core and photographed at desktop and phone widths into docs/admin/.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serve, type RunningServer } from '../../adapters/node.js'
import { createAffiliateService, memoryStorage, storageKeyStore, type AffiliateService } from '../../src/index.js'
import { DESKTOP, expectAccessible, photograph } from '../support/page-check.js'

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
const DOCS = join(ROOT, 'docs', 'admin')
const TOKEN = 'owner-token-owner-token-owner-token-42'
const WORKSPACE = '77777777-7777-4777-8777-777777777777'
const DAY_MS = 86_400_000

let service: AffiliateService
let server: RunningServer
let origin: string
let clock: { now(): number }
let context: BrowserContext
const foreignRequests: string[] = []
const shot = new Set<string>()

async function visitor(javaScriptEnabled: boolean): Promise<Page> {
  await Promise.all(context.pages().map((open) => open.close()))
  await context.clearCookies()
  const page = await context.newPage()
  if (!javaScriptEnabled) await (await context.newCDPSession(page)).send('Emulation.setScriptExecutionDisabled', { value: true })
  return page
}

/** axe-core (no serious or critical violation) and the page at both widths, once per page name. */
async function check(page: Page, name: string, js: boolean): Promise<void> {
  if (!js || shot.has(name)) return
  shot.add(name)
  await expectAccessible(page, { seriousOnly: true })
  await photograph(page, DOCS, name)
}

/**
 * Four weeks of a running program before the owner's day, so the overview has something to show:
 * a campaign whose commissions are not due for 90 days (the day's payout run pays only its own),
 * three affiliates, and every day some clicks on their links, a few of which become sales. The
 * clock is moved forward through those days (never back), then left at the day's start.
 */
async function seedHistory(service: AffiliateService, moveTo: (offsetMs: number) => void): Promise<void> {
  moveTo(-28 * DAY_MS)
  const campaign = await service.api.campaigns.create({
    workspaceId: WORKSPACE,
    campaignName: 'Spring launch',
    url: 'https://shop.example.com/spring',
    commissionType: 'percentage',
    amount: 20,
    payoutTerm: 90,
  })
  const affiliates = await Promise.all(
    ['ana@example.com', 'bo@example.com', 'chen@example.com'].map((email) =>
      service.api.affiliates.create({ email, campaignId: campaign.id }),
    ),
  )
  const links = await Promise.all(
    affiliates.map((affiliate, i) => service.api.links.create({ affiliateId: affiliate.id, referralCode: `SPRING-${i + 1}` })),
  )
  for (let day = 27; day >= 1; day--) {
    moveTo(-day * DAY_MS)
    for (const [i, link] of links.entries()) {
      // A weekly rhythm, busier for the first affiliate and towards the day.
      const clicks = 3 + ((day * 7 + i * 5) % 9) + Math.floor((28 - day) / 4) * (3 - i)
      for (let n = 0; n < clicks; n++) {
        const answer = await service.fetch(
          new Request(`http://127.0.0.1/api/v1/r/${link.referralCode}`, {
            headers: { 'user-agent': `Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 visitor-${day}-${n}` },
          }),
          { clientAddress: `10.${i}.${day}.${n}` },
        )
        const clickId = new URL(answer.headers.get('location')!).searchParams.get('clickId')!
        if (n % 6 === 5) {
          await service.flush()
          // A sale through the click: 20% of it is the commission, and the sale is the referred revenue.
          const sale = (40 + ((day * 13 + n) % 7) * 10) * 5
          await service.api.conversions.sale({
            workspaceId: WORKSPACE,
            clickId,
            email: `buyer-${day}-${i}-${n}@example.com`,
            amount: String(sale),
            currency: 'USD',
            invoiceId: `in_${day}_${i}_${n}`,
          })
        }
      }
    }
    await service.flush()
  }
  moveTo(0)
}

/** Submits a confirmed action: the dialog with JavaScript, the confirmation page without. */
async function confirm(page: Page, js: boolean, button: string, pageButton: string): Promise<void> {
  await page.getByRole('button', { name: button }).first().click()
  if (js) {
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click()
  } else {
    await page.getByRole('button', { name: pageButton }).click()
  }
  await page.waitForLoadState()
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not at ${CHROMIUM}: install it (apt-get install -y chromium) or set AFFILIATE_TEST_CHROMIUM`)
  mkdirSync(DOCS, { recursive: true })
  const start = Date.UTC(2026, 2, 2, 9)
  const began = Date.now()
  let offset = 0
  clock = { now: () => start + offset + (Date.now() - began) }
  const storage = memoryStorage()
  const keyStore = storageKeyStore(storage, { clock })
  await keyStore.create({ workspaceIds: [WORKSPACE], label: 'made by the first start' })
  service = createAffiliateService({
    storage,
    keyStore,
    clock,
    // The owner's day never follows an e-mailed link, so the portal's public URL is only its origin's shape.
    portal: {
      secret: 'e2e-secret-e2e-secret-e2e-secret-e2e-secret',
      publicUrl: 'http://127.0.0.1',
      sendSignInLink: () => undefined,
      sendNotice: () => undefined,
      signInLimit: false,
    },
    admin: { tokenHash: createHash('sha256').update(TOKEN).digest('hex') },
  })
  await seedHistory(service, (to) => (offset = to))
  server = await serve(service, { port: 0, hostname: '127.0.0.1' })
  origin = new URL(server.url).origin
  const profile = join(ROOT, '.tmp', 'e2e-profiles', `admin-${process.pid}-${Date.now()}`)
  rmSync(profile, { recursive: true, force: true })
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: DESKTOP })
  context.setDefaultTimeout(15_000)
  context.on('request', (request) => {
    if (!request.url().startsWith(origin)) foreignRequests.push(request.url())
  })
}, 60_000)

afterAll(async () => {
  await context?.close()
  await server?.close()
  expect(foreignRequests).toEqual([])
})

describe.each([true, false])('an owner’s day in the admin (JavaScript %s)', (js) => {
  it('signs in, creates a campaign, approves an applicant, records a sale, refunds half, pays out, exports, makes, uses and revokes a key, connects Stripe', async () => {
    const tag = js ? 'js' : 'nojs'
    const page = await visitor(js)
    await page.goto(`${origin}/admin`)
    expect(page.url()).toBe(`${origin}/admin/sign-in`)
    await check(page, 'sign-in', js)
    await page.getByLabel('Admin token').fill(TOKEN)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${origin}/admin`)
    await check(page, 'overview', js)

    // A campaign that needs approval and pays at once.
    await page.getByRole('link', { name: 'Campaigns', exact: true }).click()
    await check(page, 'campaigns', js)
    await page.getByRole('link', { name: 'New campaign' }).click()
    await check(page, 'campaign-new', js)
    await page.getByLabel('Name').fill(`Partners ${tag}`)
    await page.getByLabel('Website URL').fill('https://shop.example.com/')
    await page.getByLabel('Amount', { exact: true }).fill('20')
    await page.getByLabel('Minimum payout amount').fill('0')
    await page.getByLabel('Payout term (days)').fill('0')
    await page.getByLabel('Applicants need approval').check()
    await page.getByRole('button', { name: 'Create campaign' }).click()
    await page.getByRole('status').filter({ hasText: 'Campaign created.' }).waitFor()
    const campaign = (await service.api.campaigns.list({ limit: 100 })).items.find((c) => c.campaignName === `Partners ${tag}`)!
    await page.getByRole('link', { name: `Partners ${tag}` }).click()
    await check(page, 'campaign-edit', js)

    // An applicant joins through the portal.
    const email = `applicant-${tag}@example.com`
    await page.goto(`${origin}/portal/join/${campaign.id}`)
    await page.getByLabel('E-mail address').fill(email)
    await page.getByRole('button', { name: 'Apply to join' }).click()
    await page.getByRole('heading', { name: 'Application received' }).waitFor()

    // The owner approves them (the bulk form), and sets their payout details.
    await page.goto(`${origin}/admin/affiliates?status=pending`)
    await check(page, 'affiliates', js)
    await page.getByLabel(`Select ${email}`).check()
    await page.getByRole('button', { name: 'Approve selected' }).click()
    await page.getByRole('status').filter({ hasText: 'Applicants approved.' }).waitFor()
    await page.getByRole('link', { name: email }).click()
    await page.getByLabel('Payout e-mail').fill(email)
    await page.getByLabel('Payout method').selectOption('PAYPAL')
    await page.getByRole('button', { name: 'Save affiliate' }).click()
    await page.getByRole('status').filter({ hasText: 'Affiliate saved.' }).waitFor()
    await check(page, 'affiliate-detail', js)
    const affiliate = (await service.api.affiliates.list({ email, limit: 1 })).items[0]!
    expect(affiliate).toMatchObject({ isActive: true, payoutMethod: 'PAYPAL' })

    // A sale, by hand, then half of it refunded.
    await page.getByRole('link', { name: 'Commissions', exact: true }).click()
    await page.getByRole('link', { name: 'Add commission' }).click()
    await check(page, 'commission-new', js)
    await page.getByLabel('Campaign', { exact: true }).selectOption(campaign.id)
    await page.getByLabel('Affiliate ID').fill(affiliate.id)
    await page.getByLabel('Customer e-mail').fill(`customer-${tag}@example.com`)
    await page.getByLabel('Commission amount').fill('100')
    await page.getByRole('button', { name: 'Add commission' }).click()
    await page.getByRole('status').filter({ hasText: 'Commission added.' }).waitFor()
    await check(page, 'commissions', js)
    await page.getByRole('link', { name: `Refund the commission of customer-${tag}@example.com` }).click()
    await check(page, 'commission-refund', js)
    await page.getByLabel('Amount to refund').fill('50')
    await page.getByRole('button', { name: 'Review refund' }).click()
    await page.getByText('Refund 50.00 USD of 100.00 USD: the commission drops from 100.00 USD to 50.00 USD.').waitFor()
    await check(page, 'commission-refund-confirm', js)
    await page.getByRole('button', { name: 'Refund' }).click()
    // The refund answers with the commission's own page.
    await page.getByRole('status').filter({ hasText: 'Commission refunded.' }).waitFor()
    await page.getByRole('heading', { name: 'Commission 50.00 USD' }).waitFor()
    await check(page, 'commission-detail', js)

    // Payouts: preview (dry run), run, mark paid with a reference, export the PayPal file.
    await page.getByRole('link', { name: 'Payouts', exact: true }).click()
    await check(page, 'payouts', js)
    await page.getByRole('button', { name: 'Preview a payout run' }).click()
    await page.getByRole('heading', { name: 'Payout preview' }).waitFor()
    await page.getByText('50.00 USD').waitFor()
    await check(page, 'payout-preview', js)
    await confirm(page, js, 'Run payouts', 'Run payouts')
    await page.getByRole('status').filter({ hasText: 'Payouts made.' }).waitFor()
    const payout = (await service.api.payouts.list({ affiliateId: affiliate.id })).items[0]!
    expect(payout).toMatchObject({ amount: '50.00', status: 'pending' })
    // The list names the affiliate by e-mail; the amount opens the payout.
    await page.getByRole('row').filter({ hasText: email }).getByRole('link', { name: '50.00 USD' }).click()
    await check(page, 'payout-detail', js)
    await page.getByLabel('New status').selectOption('processing')
    await page.getByRole('button', { name: 'Update payout' }).click()
    await page.getByRole('status').filter({ hasText: 'Payout updated.' }).waitFor()
    await page.getByLabel('New status').selectOption('paid')
    await page.getByLabel('Reference of the payment').fill(`PP-${tag}`)
    await page.getByRole('button', { name: 'Update payout' }).click()
    await page.getByRole('button', { name: 'Mark paid' }).click()
    await page.getByRole('status').filter({ hasText: 'Payout updated.' }).waitFor()
    expect(await service.api.payouts.get(payout.payoutId)).toMatchObject({ status: 'paid', externalReference: `PP-${tag}` })
    await page.goto(`${origin}/admin/payouts?status=paid`)
    const href = await page.getByRole('link', { name: 'PayPal file' }).getAttribute('href')
    const file = await page.request.get(`${origin}${href}`)
    expect(file.status()).toBe(200)
    expect(await file.text()).toContain(email)

    // An API key: made, shown once, used, revoked.
    await page.getByRole('link', { name: 'Settings', exact: true }).click()
    await check(page, 'integrations', js)
    await page.getByLabel('Label').fill(`backend ${tag}`)
    await page.getByRole('button', { name: 'Create API key' }).click()
    const key = (await page.locator('[data-secret]').textContent())!.trim()
    expect(key).toMatch(/^aff_live_[A-Za-z0-9]{32}$/)
    await page.getByText('You will not see it again').waitFor()
    if (js) await page.getByRole('button', { name: 'Copy', exact: true }).waitFor()
    await check(page, 'integrations-key-made', js)
    const use = () => fetch(`${origin}/api/v1/campaigns/list`, { headers: { 'x-auth-service': key } }).then((r) => r.status)
    expect(await use()).toBe(200)
    await page.goto(`${origin}/admin/settings/integrations`)
    await confirm(page, js, `Revoke backend ${tag}`, 'Revoke key')
    await page.getByRole('status').filter({ hasText: 'API key revoked.' }).waitFor()
    expect(await use()).toBe(401)

    // Stripe: connected to the campaign, its endpoint URL shown to paste into Stripe; a signed event in its log; disconnected.
    const secret = `whsec_e2e_${tag}_5d2c8a1f`
    await page.getByLabel('Signing secret').fill(secret)
    await page.getByLabel('Campaign (optional)').selectOption(campaign.id)
    await page.locator('#connect-description').fill(`Shop ${tag}`)
    await page.getByRole('button', { name: 'Connect Stripe' }).click()
    await page.getByRole('status').filter({ hasText: 'Stripe connected.' }).waitFor()
    const integration = (await service.api.integrations.list({ limit: 100 })).items.find((i) => i.description === `Shop ${tag}`)!
    const endpoint = `${origin}/api/v1/integrations/${integration.integrationId}/events`
    await page.getByText('Endpoint URL (paste it into Stripe)').waitFor()
    expect(await page.locator(`#endpoint-${integration.integrationId}`).textContent()).toBe(endpoint)
    expect(await page.content()).not.toContain(secret)
    if (js) await page.getByRole('button', { name: `Copy the endpoint URL of Stripe Shop ${tag}` }).waitFor()
    await check(page, 'integrations-stripe', js)
    const payload = JSON.stringify({
      id: `evt_e2e_${tag}`,
      object: 'event',
      livemode: true,
      api_version: '2025-03-31.basil',
      type: 'payment_intent.created',
      data: { object: { id: 'pi_1' } },
    })
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(clock.now() / 1000) })
    expect((await fetch(endpoint, { method: 'POST', headers: { 'stripe-signature': signature }, body: payload })).status).toBe(200)
    await page.getByRole('link', { name: `Event log of Stripe Shop ${tag}` }).click()
    await page.getByText(`evt_e2e_${tag}`).waitFor()
    await check(page, 'integration-events', js)
    await page.getByRole('link', { name: 'Back to integrations' }).click()
    await confirm(page, js, `Disconnect Stripe Shop ${tag}`, 'Disconnect')
    await page.getByRole('status').filter({ hasText: 'Stripe disconnected.' }).waitFor()
    expect((await service.api.integrations.list({ limit: 100 })).items.some((i) => i.integrationId === integration.integrationId)).toBe(
      false,
    )
  }, 240_000)
})
