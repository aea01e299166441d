import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import { generateReferralCode, referralUrl, shareUrlOf, toLink, type ReferralLink } from '../domain/link.js'
import type { LinkRecord } from '../domain/records.js'
import { notFound, unprocessable, validationError } from '../errors.js'
import { linkAffiliate, linkCreate, linkId, linkTrack, linkTrackBatch } from '../schemas/links.js'
import { parse, parseBody } from '../schemas/validate.js'
import { UniqueViolationError, type StorageTransaction } from '../storage/types.js'
import { canSee, visible, type Access } from './access.js'
import { findAffiliate } from './affiliates.js'
import { findCampaign } from './campaigns.js'
import { emit, emitted } from '../events/outbox.js'
import { inTransaction, readOnly, type Deps } from './shared.js'
import { addToRollups } from '../reports/rollup.js'

export type LinkCreateInput = Infer<typeof linkCreate.struct>
export type LinkTrackInput = Infer<typeof linkTrack.struct>
export type LinkTrackBatchInput = Infer<typeof linkTrackBatch.struct>

/** What a batch of events answers: how many were counted, and each link they touched as it now stands (first-touched first). */
export interface LinkTrackBatch {
  tracked: number
  items: ReferralLink[]
}

/** GET /links answers every link of an affiliate, so their number is bounded. */
export const MAX_LINKS_PER_AFFILIATE = 100
/** A generated code colliding five times running means something is wrong, not bad luck. */
const GENERATION_ATTEMPTS = 5

/** The link with this code, when the caller may see it; null otherwise. */
export async function findLinkByCode(tx: StorageTransaction, access: Access, code: string): Promise<LinkRecord | null> {
  const [link] = await tx.find('links', { where: { referralCode: code }, limit: 1 })
  return link && canSee(access, link.workspaceId) ? link : null
}

/**
 * Counts one open or click on a link and on its affiliate. Every counted event goes through here:
 * the keyed `POST /links/track` (one or a batch), the public redirect and the beacon; so whatever
 * an event must move (counters, report rollups) moves in one place, in the caller's transaction.
 * `at` (ISO 8601) is when it happened: the hour its rollup counts it in.
 */
export async function countEvent(tx: StorageTransaction, link: LinkRecord, event: 'open' | 'click', at: string): Promise<LinkRecord> {
  const field = event === 'open' ? 'totalOpens' : 'totalClicks'
  const updated = await tx.increment('links', link.id, { [field]: 1 })
  await tx.increment('affiliates', link.affiliateId, { [field]: 1 })
  await addToRollups(tx, [{ scope: link, at, deltas: { [event === 'open' ? 'opens' : 'clicks']: 1 } }])
  return updated!
}

export function linkOperations({ storage, clock }: Deps) {
  async function insertLink(tx: StorageTransaction, access: Access, input: LinkCreateInput, code: string): Promise<ReferralLink> {
    const affiliate = await findAffiliate(tx, access, input.affiliateId)
    const campaign = await findCampaign(tx, access, affiliate.campaignId)
    const parameter = input.urlParameter ?? campaign.allowedUrlParameters[0] ?? 'ref'
    if (!campaign.allowedUrlParameters.includes(parameter)) {
      const allowed = campaign.allowedUrlParameters.join(', ')
      throw validationError([
        { type: 'field', msg: `urlParameter must be one of the campaign's allowedUrlParameters: ${allowed}`, path: 'urlParameter', location: 'body' },
      ])
    }
    if ((await tx.count('links', { where: { affiliateId: affiliate.id } })) >= MAX_LINKS_PER_AFFILIATE) {
      throw unprocessable(`An affiliate can have at most ${MAX_LINKS_PER_AFFILIATE} links`, 'limit_reached')
    }
    const now = isoAt(clock)
    const record: LinkRecord = {
      id: newId(),
      workspaceId: affiliate.workspaceId,
      campaignId: campaign.id,
      affiliateId: affiliate.id,
      userId: access.userId,
      referralCode: code,
      urlParameter: parameter,
      url: referralUrl(campaign.url, parameter, code),
      shareUrl: shareUrlOf(campaign.url, code),
      totalOpens: 0,
      totalClicks: 0,
      totalSignups: 0,
      totalEarningsMinor: 0,
      createdAt: now,
      updatedAt: now,
    }
    await tx.insert('links', record)
    return emitted(tx, clock, 'link.created', record.workspaceId, toLink(record))
  }

  async function trackBatch(access: Access, body: unknown, query: unknown): Promise<LinkTrackBatch> {
    const { events } = parseBody(linkTrackBatch, body, query)
    return inTransaction(storage, async (tx) => {
      const codes = [...new Set(events.map((entry) => entry.referralCode))]
      const found = await tx.find('links', { where: { referralCode: { in: codes } } })
      const links = new Map(found.filter((link) => canSee(access, link.workspaceId)).map((link) => [link.referralCode, link]))
      const unknown = events.findIndex((entry) => !links.has(entry.referralCode))
      if (unknown >= 0) throw notFound(`Link ${events[unknown]!.referralCode} (events[${unknown}])`)
      const touched = new Map<string, LinkRecord>()
      const at = isoAt(clock)
      for (const { referralCode, event } of events) {
        const counted = await countEvent(tx, touched.get(referralCode) ?? links.get(referralCode)!, event, at)
        touched.set(referralCode, counted)
      }
      return { tracked: events.length, items: [...touched.values()].map(toLink) }
    })
  }

  return {
    async create(access: Access, body: unknown, query: unknown = {}): Promise<ReferralLink> {
      const input = parseBody(linkCreate, body, query)
      const supplied = input.referralCode
      if (supplied !== undefined) return inTransaction(storage, (tx) => insertLink(tx, access, input, supplied))
      // A generated code that collides is drawn again; the store's constraint, not a prior read, decides.
      for (let attempt = 1; ; attempt++) {
        try {
          return await storage.transaction((tx) => insertLink(tx, access, input, generateReferralCode()))
        } catch (error) {
          if (!(error instanceof UniqueViolationError) || attempt >= GENERATION_ATTEMPTS) throw error
        }
      }
    },

    async list(access: Access, query: unknown): Promise<{ items: ReferralLink[] }> {
      const { affiliateId } = parse([linkAffiliate, query]).query
      return inTransaction(
        storage,
        async (tx) => {
          const affiliate = await findAffiliate(tx, access, affiliateId)
          const links = await tx.find('links', { where: { affiliateId: affiliate.id }, orderBy: { field: 'createdAt', direction: 'DESC' } })
          return { items: links.map(toLink) }
        },
        readOnly,
      )
    },

    async delete(access: Access, query: unknown): Promise<{ id: string }> {
      const { linkId: id } = parse([linkId, query]).query
      return inTransaction(storage, async (tx) => {
        const link = visible(access, await tx.get('links', id.toLowerCase()), 'Link')
        await tx.delete('links', link.id)
        await emit(tx, clock, 'link.deleted', link.workspaceId, toLink(link))
        return { id: link.id }
      })
    },

    /**
     * Counts an open or a click on the link and on its affiliate, in one transaction; or, for
     * `{ events: [...] }`, up to 1,000 of them in one transaction (all or none: an unknown code
     * is 404 naming it).
     */
    async track(access: Access, body: unknown, query: unknown = {}): Promise<ReferralLink | LinkTrackBatch> {
      if (typeof body === 'object' && body !== null && 'events' in body) return trackBatch(access, body, query)
      const { referralCode, event } = parseBody(linkTrack, body, query)
      return inTransaction(storage, async (tx) => {
        const link = await findLinkByCode(tx, access, referralCode)
        if (!link) throw notFound('Link')
        return toLink(await countEvent(tx, link, event, isoAt(clock)))
      })
    },
  }
}
