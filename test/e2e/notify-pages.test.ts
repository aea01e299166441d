// The e-mail pages in a real browser (Debian's Chromium through playwright-core, as the portal's and
// the admin's tests): the owner's Settings → E-mail with the development mailbox and a campaign's
// e-mail switches, the affiliate's e-mail choices on the dashboard, and the unsubscribe link's page.
// Each passes axe-core (no serious or critical violation) and works by keyboard-free clicks alone.
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { serve, type RunningServer } from '../../adapters/node.js'
import { createAffiliateService, developmentMailbox, memoryStorage, memoryKeyStore, type AffiliateService } from '../../src/index.js'
import { expectAccessible } from '../support/page-check.js'

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
const WORKSPACE = '66666666-6666-4666-8666-666666666666'

let service: AffiliateService
let server: RunningServer
let origin: string
let context: BrowserContext
const mailbox = developmentMailbox()
const signInLinks: string[] = []
let campaignId = ''

const axe = (page: Page) => expectAccessible(page, { seriousOnly: true })

beforeAll(async () => {
  // The server's port is known only once it listens: the portal's public URL is the origin, set after.
  const storage = memoryStorage()
  let publicUrl = 'http://127.0.0.1'
  const make = () =>
    createAffiliateService({
      storage,
      keyStore: memoryKeyStore([]),
      rateLimit: false,
      portal: {
        secret: 'e2e-notify-secret-e2e-notify-secret-0',
        publicUrl,
        sendSignInLink: (_email, url) => void signInLinks.push(url),
        sendNotice: () => undefined,
        signInLimit: false,
      },
      admin: { authorize: async () => ({ userId: 'owner', workspaceIds: [WORKSPACE] }) },
      notify: { mailbox },
    })
  const probe = await serve(make(), { port: 0, hostname: '127.0.0.1' })
  const port = new URL(probe.url).port
  await probe.close()
  publicUrl = `http://127.0.0.1:${port}`
  service = make()
  server = await serve(service, { port: Number(port), hostname: '127.0.0.1' })
  origin = publicUrl
  const campaign = await service.api.campaigns.create({
    workspaceId: WORKSPACE,
    campaignName: 'Acme Partners',
    commissionType: 'fixed',
    amount: 10,
    url: 'https://shop.example.com/',
    isDefault: true,
  })
  campaignId = campaign.id
  await service.api.affiliates.create({ email: 'ann@example.com', firstName: 'Ann', campaignId })
  const profile = join(ROOT, '.tmp', 'e2e-profiles', `notify-${process.pid}-${Date.now()}`)
  rmSync(profile, { recursive: true, force: true })
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  })
  context.setDefaultTimeout(15_000)
}, 60_000)

afterAll(async () => {
  await context?.close()
  await server?.close()
})

it('the owner sets addresses and a campaign’s e-mails; the affiliate chooses hers and uses an unsubscribe link', {
  timeout: 90_000,
}, async () => {
  const page = await context.newPage()
  // Settings → E-mail: the owners' addresses, then the mailbox.
  await page.goto(`${origin}/admin/settings/mail`)
  await axe(page)
  await page.getByLabel('Owners’ e-mail addresses').fill('owner@example.com')
  await page.getByRole('button', { name: 'Save addresses' }).click()
  await page.getByRole('status').filter({ hasText: 'E-mail settings saved.' }).waitFor()

  // The campaign's switches: turn on declined applications.
  await page.goto(`${origin}/admin/campaigns/edit?campaignId=${campaignId}`)
  await page.getByRole('link', { name: 'E-mail notifications' }).click()
  await axe(page)
  await page.getByLabel(/Your application is declined/).check()
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByRole('status').filter({ hasText: 'E-mail settings saved.' }).waitFor()
  expect(await page.getByLabel(/Your application is declined/).isChecked()).toBe(true)

  // A commission for Ann: its e-mail lands in the mailbox the admin lists.
  const ann = (await service.api.affiliates.list({ email: 'ann@example.com' })).items[0]!
  await service.api.commissions.create({
    campaignId,
    affiliateId: ann.id,
    referredUser: 'buyer@example.com',
    amount: '12.50',
    commissionDate: new Date().toISOString(),
  })
  await service.notifications!.flush()
  await page.goto(`${origin}/admin/settings/mail`)
  await page.getByText('You earned $12.50 with Acme Partners').waitFor()
  await axe(page)

  // Ann signs in and chooses one e-mail a day.
  await page.goto(`${origin}/portal/sign-in`)
  await page.getByLabel('E-mail address').fill('ann@example.com')
  await page.getByRole('button', { name: /sign-in link/i }).click()
  await expect.poll(() => signInLinks.length).toBe(1)
  await page.goto(signInLinks[0]!)
  await page.getByRole('button', { name: /sign in/i }).click()
  await page.getByRole('heading', { name: 'E-mails' }).waitFor()
  await axe(page)
  await page.getByLabel('One a day, listing the day’s commissions'.replace('’', "'")).check()
  await page.getByRole('button', { name: 'Save e-mail choices' }).click()
  await page.getByRole('status').filter({ hasText: 'Your e-mail choices are saved.' }).waitFor()

  // The unsubscribe link of the commission e-mail: a page with a button, then done once.
  const sent = mailbox.messages().find((m) => m.subject.startsWith('You earned'))!
  const link = /^<(.+)>$/.exec(sent.headers!['List-Unsubscribe']!)![1]!
  await page.goto(link)
  await axe(page)
  await page.getByRole('button', { name: 'Stop these e-mails' }).click()
  await page.getByRole('heading', { name: 'You are unsubscribed' }).waitFor()
  await axe(page)
})
