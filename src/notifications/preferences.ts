// Who turned which notification off: affiliates (the portal, an unsubscribe link) and owners (per
// campaign, in the admin), and the owners' addresses kept in storage (Settings → E-mail).

import { isoAt, type Clock } from '../clock.js'
import type { NotificationPreferenceRecord } from '../domain/records.js'
import type { Storage, StorageTransaction } from '../storage/types.js'
import { AFFILIATE_KINDS, CAMPAIGN_KINDS, KINDS, type NotificationKind } from './kinds.js'

/** The `settings` record holding a workspace's owners' addresses (one per line). */
export const ownersSetting = (workspaceId: string) => `notify.owners:${workspaceId}`

/** Whether a campaign sends `kind`: its owner's choice, else the kind's default. */
export const campaignSends = (preference: NotificationPreferenceRecord | null, kind: NotificationKind): boolean =>
  preference?.turnedOn.includes(kind) ? true : preference?.turnedOff.includes(kind) ? false : KINDS[kind].byDefault

/** Whether an affiliate takes `kind` (every kind unless turned off). */
export const affiliateTakes = (preference: NotificationPreferenceRecord | null, kind: NotificationKind): boolean =>
  !preference?.turnedOff.includes(kind)

export const preferenceOf = (tx: StorageTransaction, id: string): Promise<NotificationPreferenceRecord | null> =>
  tx.get('notificationPreferences', id)

/** The owners' addresses kept for a workspace (empty when none). */
export async function storedOwners(tx: StorageTransaction, workspaceId: string): Promise<string[]> {
  const setting = await tx.get('settings', ownersSetting(workspaceId))
  return setting ? setting.value.split('\n').filter(Boolean) : []
}

async function put(
  tx: StorageTransaction,
  clock: Clock,
  record: Omit<NotificationPreferenceRecord, 'createdAt' | 'updatedAt'>,
): Promise<NotificationPreferenceRecord> {
  const now = isoAt(clock)
  const current = await tx.get('notificationPreferences', record.id)
  if (current)
    return (await tx.update('notificationPreferences', record.id, {
      turnedOff: record.turnedOff,
      turnedOn: record.turnedOn,
      digest: record.digest,
      updatedAt: now,
    }))!
  const made = { ...record, createdAt: now, updatedAt: now }
  await tx.insert('notificationPreferences', made)
  return made
}

export interface AffiliateChoice {
  /** The kinds the affiliate turns off (others are on). */
  off: readonly NotificationKind[]
  /** `commission.earned` as one e-mail a day. */
  digest: boolean
}

export function notificationPreferences(storage: Storage, clock: Clock) {
  return {
    /** An affiliate's choices (defaults when never set). */
    ofAffiliate: (affiliateId: string) =>
      storage.transaction(
        async (tx) => {
          const p = await preferenceOf(tx, affiliateId)
          return { off: AFFILIATE_KINDS.filter((kind) => !affiliateTakes(p, kind)), digest: p?.digest ?? false }
        },
        { readOnly: true },
      ),
    setAffiliate: (affiliate: { id: string; workspaceId: string }, choice: AffiliateChoice) =>
      storage.transaction((tx) =>
        put(tx, clock, {
          id: affiliate.id,
          workspaceId: affiliate.workspaceId,
          scope: 'affiliate',
          turnedOff: AFFILIATE_KINDS.filter((k) => choice.off.includes(k)),
          turnedOn: [],
          digest: choice.digest,
        }),
      ),
    /** The kinds a campaign sends. */
    ofCampaign: (campaignId: string) =>
      storage.transaction(
        async (tx) => {
          const p = await preferenceOf(tx, campaignId)
          return CAMPAIGN_KINDS.filter((kind) => campaignSends(p, kind))
        },
        { readOnly: true },
      ),
    /** Sets the kinds a campaign sends: the others are off. */
    setCampaign: (campaign: { id: string; workspaceId: string }, sends: readonly NotificationKind[]) =>
      storage.transaction((tx) =>
        put(tx, clock, {
          id: campaign.id,
          workspaceId: campaign.workspaceId,
          scope: 'campaign',
          turnedOff: CAMPAIGN_KINDS.filter((k) => KINDS[k].byDefault && !sends.includes(k)),
          turnedOn: CAMPAIGN_KINDS.filter((k) => !KINDS[k].byDefault && sends.includes(k)),
          digest: false,
        }),
      ),
    owners: (workspaceId: string) => storage.transaction((tx) => storedOwners(tx, workspaceId), { readOnly: true }),
    setOwners: (workspaceId: string, owners: readonly string[]) =>
      storage.transaction(async (tx) => {
        const id = ownersSetting(workspaceId)
        const value = [...new Set(owners.map((o) => o.trim()).filter(Boolean))].join('\n')
        const now = isoAt(clock)
        if (await tx.get('settings', id)) await tx.update('settings', id, { value, updatedAt: now })
        else await tx.insert('settings', { id, value, createdAt: now, updatedAt: now })
      }),
  }
}

export type NotificationPreferences = ReturnType<typeof notificationPreferences>
