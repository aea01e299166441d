import type { Infer } from 'superstruct'
import { isoAt } from '../clock.js'
import { newId } from '../crypto.js'
import { generateReferralCode, referralUrl, shareUrlOf, toLink, type ReferralLink } from '../domain/link.js'
import type { LinkRecord } from '../domain/records.js'
import { notFound, unprocessable, validationError } from '../errors.js'
import { linkAffiliate, linkCreate, linkId, linkTrackBatch, linkTrackKeyed } from '../schemas/links.js'
import { parse, parseBody } from '../schemas/validate.js'
import { UniqueViolationError, type StorageTransaction } from '../storage/types.js'
import { canSee, visible, type Access } from './access.js'
import { findAffiliate } from './affiliates.js'
import { findCampaign } from './campaigns.js'
import { emit, emitted, type EventTransaction } from '../events/outbox.js'
import { inTransaction, readOnly, type Deps } from './shared.js'

export type LinkCreateInput = Infer<typeof linkCreate.struct>
export type LinkTrackInput = Infer<typeof linkTrackKeyed.struct>
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

export function linkOperations({ storage, clock, clickCapture, clickWritten }: Deps) {
  async function insertLink(tx: EventTransaction, access: Access, input: LinkCreateInput, code: string): Promise<ReferralLink> {
    const affiliate = await findAffiliate(tx, access, input.affiliateId)
    const campaign = await findCampaign(tx, access, affiliate.campaignId)
    const parameter = input.urlParameter ?? campaign.allowedUrlParameters[0] ?? 'ref'
    if (!campaign.allowedUrlParameters.includes(parameter)) {
      const allowed = campaign.allowedUrlParameters.join(', ')
      throw validationError([
        {
          type: 'field',
          msg: `urlParameter must be one of the campaign's allowedUrlParameters: ${allowed}`,
          path: 'urlParameter',
          location: 'body',
        },
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

  /**
   * Counts `events` through the click capture, as the redirect and the beacon count theirs (click
   * records, dedupe and bots for a visitor named, written in a batch), once every code is known to
   * the caller (else 404 naming the first unknown, `at` its place: nothing is counted). Resolves
   * once their clicks are written, with how many were counted and each link touched as it now
   * stands, first-touched first; a failed write counts none of them and is thrown.
   */
  async function countEvents(access: Access, events: readonly LinkTrackInput[], at: (i: number) => string): Promise<LinkTrackBatch> {
    const capture = await clickCapture()
    // Looked up together: the codes not in memory are read at once.
    const found = await Promise.all(events.map((entry) => capture.findLink(entry.referralCode)))
    const links = found.map((link, i) => {
      if (!link || !canSee(access, link.workspaceId)) throw notFound(at(i))
      return link
    })
    const { results, links: written } = await capture.countKeyed(
      events.map(({ event, userAgent, clientAddress }, i) => ({
        link: links[i]!,
        event,
        visit: userAgent === undefined && clientAddress === undefined ? null : { address: clientAddress, userAgent: userAgent ?? '' },
      })),
    )
    const tracked = results.filter((result) => result.counted).length
    // A repeat answers an earlier click, which may still wait in its batch (written before this one's).
    const earlier = new Set(results.flatMap((result) => (!result.counted && result.clickId !== null ? [result.clickId] : [])))
    if (clickWritten) await Promise.all([...earlier].map((id) => clickWritten(id)))
    const ids = [...new Set(links.map((link) => link.id))]
    // The links as the write of this call's clicks left them; those it wrote none for (repeats, bots) are read now.
    const unread = ids.filter((id) => !written.has(id))
    const read = unread.length === 0 ? [] : await storage.transaction((tx) => tx.find('links', { where: { id: { in: unread } } }), readOnly)
    const byId = new Map([...written, ...read.map((link) => [link.id, link] as const)])
    // A link deleted meanwhile is answered as it was found (its click was not counted).
    return { tracked, items: ids.map((id) => toLink(byId.get(id) ?? links.find((link) => link.id === id)!)) }
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
     * Counts an open or a click on the link and on its affiliate, as the redirect and the beacon
     * count theirs (see `countEvents`), and answers the link once it is written; or, for
     * `{ events: [...] }`, up to 1,000 of them (an unknown code is 404 naming it, and nothing is
     * counted).
     */
    async track(access: Access, body: unknown, query: unknown = {}): Promise<ReferralLink | LinkTrackBatch> {
      if (typeof body === 'object' && body !== null && 'events' in body) {
        const { events } = parseBody(linkTrackBatch, body, query)
        return countEvents(access, events, (i) => `Link ${events[i]!.referralCode} (events[${i}])`)
      }
      const input = parseBody(linkTrackKeyed, body, query)
      return (await countEvents(access, [input], () => 'Link')).items[0]!
    },
  }
}
