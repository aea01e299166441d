// The portal in a real browser: Debian's Chromium driven by playwright-core, against a server from
// the node adapter's serve() on 127.0.0.1. Every page is checked with axe-core and photographed at
// desktop and phone widths (.tmp/screenshots/; the dashboard's also in docs/ for the README).
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serve, type RunningServer } from '../../adapters/node.js'
import { createAffiliateService, memoryKeyStore, memoryStorage, type AffiliateService, type Campaign } from '../../src/index.js'
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
const WS = '77777777-7777-4777-8777-777777777777'
const ROOT = join(import.meta.dirname, '..', '..')
const SHOTS = join(ROOT, '.tmp', 'screenshots')
const DOCS = join(ROOT, 'docs')

let service: AffiliateService
let server: RunningServer
let origin: string
const sent: { email: string; url: string }[] = []
const notices: { email: string; subject: string }[] = []
const foreignRequests: string[] = []
let open: Campaign
let reviewed: Campaign

let context: BrowserContext

/**
 * A fresh visitor: a new tab with no cookies, JavaScript on or off. One Chromium (with its own
 * profile under .tmp) serves every visitor in turn, so the run starts one browser only.
 */
async function visitor(javaScriptEnabled = true): Promise<Page> {
  await Promise.all(context.pages().map((open) => open.close()))
  await context.clearCookies()
  const page = await context.newPage()
  if (!javaScriptEnabled) await (await context.newCDPSession(page)).send('Emulation.setScriptExecutionDisabled', { value: true })
  return page
}

/** Both checks, on every page the tests visit. */
async function check(page: Page, name: string, docs = false): Promise<void> {
  // Every violation counts here, not only the serious ones.
  await expectAccessible(page)
  const shots = await photograph(page, SHOTS, name)
  // The dashboard's are kept in docs/ too.
  if (docs) {
    writeFileSync(join(DOCS, `portal-${name}.png`), shots.desktop)
    writeFileSync(join(DOCS, `portal-${name}-phone.png`), shots.phone)
  }
}

/** The sign-in link the service last sent to `email`. */
function linkFor(email: string): string {
  const link = [...sent].reverse().find((entry) => entry.email.toLowerCase() === email.toLowerCase())
  if (!link) throw new Error(`no sign-in link was sent to ${email}`)
  return link.url
}

beforeAll(async () => {
  // Fails, never skips: CI installs the package (.ci/run) when it is missing.
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not at ${CHROMIUM}: install it (apt-get install -y chromium) or set AFFILIATE_TEST_CHROMIUM`)
  mkdirSync(SHOTS, { recursive: true })
  mkdirSync(DOCS, { recursive: true })
  // Time runs as usual from a fixed day, so the dates on the screenshots in docs/ stay the same.
  const start = Date.UTC(2026, 2, 2, 9)
  const began = Date.now()
  // The server listens first (port 0), so the service's publicUrl can be the origin it got.
  server = await serve(
    { basePath: '/api/v1', fetch: (request, context) => service.fetch(request, context) },
    { port: 0, hostname: '127.0.0.1' },
  )
  origin = new URL(server.url).origin
  service = createAffiliateService({
    storage: memoryStorage(),
    keyStore: memoryKeyStore([]),
    clock: { now: () => start + (Date.now() - began) },
    portal: {
      secret: 'e2e-secret-e2e-secret-e2e-secret-e2e-secret',
      publicUrl: origin,
      sendSignInLink: (email, url) => void sent.push({ email, url }),
      sendNotice: (email, subject) => void notices.push({ email, subject }),
      signInLimit: { capacity: 50 },
    },
  })
  const profile = join(ROOT, '.tmp', 'e2e-profiles', `chromium-${process.pid}-${Date.now()}`)
  rmSync(profile, { recursive: true, force: true })
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport: DESKTOP })
  context.setDefaultTimeout(10_000)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
  // Nothing may come from another host: every request the pages make is to this server.
  context.on('request', (request) => {
    if (!request.url().startsWith(origin)) foreignRequests.push(request.url())
  })
  open = await service.api.campaigns.create({
    campaignName: 'Acme Partners',
    workspaceId: WS,
    commissionType: 'percentage',
    amount: 25,
    url: 'https://shop.example.com/pricing',
    collectAdditionalInfo: true,
    hideCustomerEmail: true,
    payoutTerm: 30,
    affiliatePortalWelcomeMessage: 'Welcome to the Acme partner program!',
    affiliateDashboardText: 'Share your link anywhere: you earn 25% of every first-year payment.',
  })
  reviewed = await service.api.campaigns.create({
    campaignName: 'Acme Ambassadors',
    workspaceId: WS,
    commissionType: 'fixed',
    amount: 50,
    url: 'https://shop.example.com/',
    requiresApprovalToJoin: true,
  })
}, 30_000)

afterAll(async () => {
  await context?.close()
  await server?.close()
  expect(foreignRequests).toEqual([])
})

describe('the affiliate portal in Chromium', () => {
  it('joins, signs in by link, makes a link, sees a click and a commission, sets payouts, signs out', async () => {
    const page = await visitor()
    await page.goto(`${origin}/portal/join/${open.id}`)
    expect(await page.title()).toContain('Join Acme Partners')
    await check(page, 'join')
    await page.getByLabel('E-mail address').fill('ann@example.com')
    await page.getByLabel('First name').fill('Ann')
    await page.getByLabel('Last name').fill('Lee')
    await page.getByLabel('Website or social profile').fill('https://ann.example')
    await page.getByLabel('How will you promote Acme Partners?').fill('My cooking blog')
    await page.getByRole('button', { name: 'Join' }).click()
    await page.getByText('You have joined').waitFor()
    await check(page, 'joined')
    const [ann] = (await service.api.affiliates.list({ email: 'ann@example.com' })).items
    expect(ann).toMatchObject({
      isActive: true,
      firstName: 'Ann',
      details: JSON.stringify({ website: 'https://ann.example', about: 'My cooking blog' }),
    })

    // The link from the e-mail: a page with one button, so mail scanners that open links use nothing.
    const link = linkFor('ann@example.com')
    await page.goto(link)
    await check(page, 'confirm')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${origin}/portal`)
    await page.getByText('Welcome to the Acme partner program!').waitFor()
    await page.getByText('Share your link anywhere').waitFor()

    // Make a link, then copy its URL with the (JavaScript) copy button.
    await page.getByLabel('Your own code').fill('ANN-E2E')
    await page.getByRole('button', { name: 'Make a link' }).click()
    await page.getByText('Your new link is ready.').waitFor()
    const url = await page.getByLabel('URL of link ANN-E2E').inputValue()
    // The counting redirect, which records the click and then sends the visitor to the campaign url.
    expect(url).toBe(`${origin}/api/v1/r/ANN-E2E`)
    await page.getByRole('button', { name: 'Copy' }).click()
    await page.getByRole('button', { name: 'Copied' }).waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url)

    // A tracked click and a commission through the link appear.
    await service.api.links.track({ referralCode: 'ANN-E2E', event: 'click' })
    await service.api.commissions.create({
      campaignId: open.id,
      affiliateId: ann!.id,
      amount: 49.5,
      referredUser: 'jane.doe@example.com',
      referralCode: 'ANN-E2E',
    })
    await page.reload()
    const stats = page.getByRole('region', { name: 'Performance' })
    expect(await stats.getByText('Clicks').locator('..').textContent()).toContain('1')
    expect(await stats.getByText('Earnings').locator('..').textContent()).toContain('$49.50')
    const commissions = page.getByRole('region', { name: 'Commissions' })
    expect(await commissions.textContent()).toContain('j•••@e•••.com')
    expect(await commissions.textContent()).not.toContain('jane.doe')

    // Payout settings.
    await page.getByLabel('Payout e-mail').fill('ann-pay@example.com')
    await page.getByLabel('Payout method').selectOption('PAYPAL')
    await page.getByRole('button', { name: 'Save payout settings' }).click()
    await page.getByText('Your payout settings are saved.').waitFor()
    expect(await service.api.affiliates.get(ann!.id)).toMatchObject({ payoutEmail: 'ann-pay@example.com', payoutMethod: 'PAYPAL' })
    // The account's e-mail hears of the change (it had no payout e-mail before).
    expect(notices).toEqual([{ email: ann!.email, subject: 'Your payout e-mail for the Acme Partners affiliate program was changed' }])
    await page.goto(`${origin}/portal`)
    await check(page, 'dashboard', true)

    // Sign out: the dashboard then sends to sign-in.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByText('You are signed out.').waitFor()
    await check(page, 'sign-in')
    await page.goto(`${origin}/portal`)
    expect(page.url()).toBe(`${origin}/portal/sign-in`)

    // The used link is refused.
    await page.goto(link)
    await page.getByText('This sign-in link is no longer valid').waitFor()
    await check(page, 'link-used')

    // Asking for a new link answers the same page whether or not the address is known.
    await page.goto(`${origin}/portal/sign-in`)
    await page.getByLabel('E-mail address').fill('nobody@example.com')
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click()
    await page.getByText('Check your inbox').first().waitFor()
    await check(page, 'sign-in-sent')
    expect(sent.some((entry) => entry.email === 'nobody@example.com')).toBe(false)
  }, 120_000)

  it('joins a campaign that needs approval, chooses between two records, and never sees the first affiliate', async () => {
    const page = await visitor()
    await page.goto(`${origin}/portal/join/${reviewed.id}`)
    // A refused form comes back with its errors, summarised and beside the field.
    await page.getByLabel('E-mail address').fill('bob-at-example.com')
    await page.getByRole('button', { name: 'Apply to join' }).click()
    await page.getByRole('alert').waitFor()
    expect(await page.getByLabel('E-mail address').getAttribute('aria-invalid')).toBe('true')
    await check(page, 'join-errors')
    await page.getByLabel('E-mail address').fill('bob@example.com')
    await page.getByRole('button', { name: 'Apply to join' }).click()
    await page.getByText('awaits approval').first().waitFor()
    await check(page, 'applied')
    const [bob] = (await service.api.affiliates.list({ email: 'bob@example.com' })).items
    expect(bob!.isActive).toBe(false)

    await page.goto(linkFor('bob@example.com'))
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${origin}/portal`)
    await page.getByText('Your account awaits approval').waitFor()
    expect(await page.getByRole('button', { name: 'Make a link' }).count()).toBe(0)
    await check(page, 'dashboard-awaiting')

    // Bob joins the first campaign too: after the next link he chooses between his two records.
    await page.goto(`${origin}/portal/join/${open.id}`)
    await page.getByLabel('E-mail address').fill('bob@example.com')
    await page.getByRole('button', { name: 'Join' }).click()
    await page.getByText('You have joined').waitFor()
    await page.goto(linkFor('bob@example.com'))
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${origin}/portal/choose`)
    await check(page, 'choose')
    await page.getByRole('button', { name: 'Open Acme Partners' }).click()
    await page.waitForURL(`${origin}/portal`)
    const text = (await page.locator('main').textContent()) ?? ''
    expect(text).toContain('Acme Partners')
    expect(text).not.toContain('ANN-E2E')
    expect(text).not.toContain('j•••')
    expect(text).not.toContain('ann')
    expect(text).not.toContain('$49.50')
  }, 120_000)

  it('works without JavaScript: signs in, chooses, makes a link (the copy button stays hidden)', async () => {
    const page = await visitor(false)
    await page.goto(`${origin}/portal/sign-in`)
    await page.getByLabel('E-mail address').fill('bob@example.com')
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click()
    await page.getByText('Check your inbox').first().waitFor()
    await page.goto(linkFor('bob@example.com'))
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${origin}/portal/choose`)
    await page.getByRole('button', { name: 'Open Acme Partners' }).click()
    await page.waitForURL(`${origin}/portal`)
    await page.getByLabel('Your own code').fill('BOB-1')
    await page.getByRole('button', { name: 'Make a link' }).click()
    await page.getByText('Your new link is ready.').waitFor()
    expect(await page.getByRole('button', { name: 'Copy' }).count()).toBe(0)
    expect(await page.getByLabel('URL of link BOB-1').inputValue()).toBe(`${origin}/api/v1/r/BOB-1`)
  }, 120_000)
})
