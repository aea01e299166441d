import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { sqlJsStorage } from '../../src/storage/sqljs/storage.js'
import { campaign, integration, link } from '../../src/storage/sample-records.js'
import { rewindFile } from '../support/sqljs-rewind.js'

// sql.js migration 20 (promo codes): a file written by version 19 upgrades in place; its links gain
// the shareUrl a link made now would have, its campaigns beaconInstalled false, its integrations no
// Stripe key, and the promo codes table is there, empty, with its constraints.

const dir = mkdtempSync(join(tmpdir(), 'affiliate-migration-20-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('a version 19 file: links get their shareUrl from their url, campaigns no beacon, integrations no key, and promo codes work', async () => {
  const file = join(dir, 'db.sqlite')
  const place = campaign({ url: 'https://shop.example.com/landing?utm=x#top' })
  const byRef = link({
    campaignId: place.id,
    referralCode: 'ANN-2026',
    urlParameter: 'ref',
    url: 'https://shop.example.com/landing?utm=x&ref=ANN-2026#top',
  })
  const byVia = link({
    campaignId: place.id,
    referralCode: 'BOB-1',
    urlParameter: 'via',
    url: 'https://shop.example.com/landing?utm=x&via=BOB-1#top',
  })
  const connected = integration()
  const first = sqlJsStorage({ persist: fileJournal(file) })
  await first.transaction(async (tx) => {
    await tx.insert('campaigns', place)
    await tx.insert('links', byRef)
    await tx.insert('links', byVia)
    await tx.insert('integrations', connected)
  })
  await first.close()
  await rewindFile(file, 19)
  const storage = sqlJsStorage({ persist: fileJournal(file) })
  try {
    const found = await storage.transaction(async (tx) => ({
      ref: await tx.get('links', byRef.id),
      via: await tx.get('links', byVia.id),
      campaign: await tx.get('campaigns', place.id),
      integration: await tx.get('integrations', connected.id),
      codes: await tx.count('promoCodes', {}),
    }))
    expect(found.ref).toStrictEqual({ ...byRef, shareUrl: 'https://shop.example.com/landing?utm=x&via=ANN-2026#top' })
    expect(found.via).toStrictEqual({ ...byVia, shareUrl: byVia.url })
    expect(found.campaign).toStrictEqual({ ...place, beaconInstalled: false })
    expect(found.integration).toStrictEqual({ ...connected, apiKey: null })
    expect(found.codes).toBe(0)
  } finally {
    await storage.close()
  }
})
