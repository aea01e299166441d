import { NOTIFICATION_KINDS } from '../domain/descriptions/notifications.js'

// The kinds of notification (SPEC wave 4, "Notifications"): who each goes to, and whether it is
// sent when nobody chose (docs/notifications.md lists the same).

export { NOTIFICATION_KINDS }
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number]

/** Who a kind goes to, whether it is sent unless turned off, and how the choice is worded for people. */
export const KINDS: Readonly<Record<NotificationKind, { to: 'affiliate' | 'owners'; byDefault: boolean; label: string }>> = {
  'affiliate.approved': { to: 'affiliate', byDefault: true, label: 'Your application is approved' },
  'affiliate.rejected': { to: 'affiliate', byDefault: false, label: 'Your application is declined' },
  'commission.earned': { to: 'affiliate', byDefault: true, label: 'You earned a commission' },
  'payout.paid': { to: 'affiliate', byDefault: true, label: 'A payout was sent to you' },
  'clawback.created': { to: 'affiliate', byDefault: true, label: 'A refund took back a paid commission' },
  'affiliate.applied': { to: 'owners', byDefault: true, label: 'Someone applied to a campaign that requires approval' },
  'integration.failing': { to: 'owners', byDefault: true, label: 'A payment provider endpoint keeps failing' },
}

/** The kinds an affiliate may turn off in the portal. */
export const AFFILIATE_KINDS = NOTIFICATION_KINDS.filter((kind) => KINDS[kind].to === 'affiliate')
/** The kinds an owner may turn on or off per campaign (`integration.failing` belongs to no campaign). */
export const CAMPAIGN_KINDS = NOTIFICATION_KINDS.filter((kind) => kind !== 'integration.failing')

export const isNotificationKind = (value: unknown): value is NotificationKind =>
  typeof value === 'string' && (NOTIFICATION_KINDS as readonly string[]).includes(value)
