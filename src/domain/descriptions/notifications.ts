import { model } from '../describe.js'
import { bool, indexedText, int, list, nullableText, stamps, text, timestamp } from './fields.js'

// The e-mails the service sends (SPEC wave 4, "Notifications"): the outbox they wait in, and who
// turned which kind off. No request writes them field by field; the portal and the admin do.

/** Every kind of notification, in the order docs/notifications.md lists them. */
export const NOTIFICATION_KINDS = [
  'affiliate.approved',
  'affiliate.rejected',
  'commission.earned',
  'payout.paid',
  'clawback.created',
  'affiliate.applied',
  'integration.failing',
] as const

/** `digested`: a `commission.earned` folded into its affiliate's daily digest (a notification of its own). */
export const NOTIFICATION_STATUSES = ['pending', 'sent', 'skipped', 'dead', 'digested'] as const

/**
 * One message to send, written in the same transaction as what it tells (the outbox): a change
 * rolled back leaves none, a committed one always has it, even if the process dies right after.
 * At most one per (`kind`, `recordId`): the unique constraint makes a second write of the same
 * notice collide instead of sending twice.
 */
export const notifications = model(
  {
    id: text(),
    workspaceId: indexedText,
    kind: text({ values: NOTIFICATION_KINDS }),
    /** What it tells of: the affiliate, commission, payout or clawback id; for `integration.failing`, `<integrationId>/<UTC day>`. */
    recordId: text(),
    /** The campaign whose owners' choices apply; null for `integration.failing`. */
    campaignId: nullableText,
    /** The affiliate it is sent to; null for the owners' kinds. */
    affiliateId: text({ nullable: true, indexed: true }),
    /** JSON of what the message says, as it was when the change committed. */
    data: text(),
    status: text({ values: NOTIFICATION_STATUSES }),
    attempts: int(),
    /** When it is due; while being sent, the end of the claim's lease; null once final. */
    nextAttemptAt: timestamp({ nullable: true }),
    /** The claim of the sender holding it, null when none does. */
    claimToken: nullableText,
    lastError: nullableText,
    sentAt: timestamp({ nullable: true }),
    /** When its unsubscribe link was used (a link works once). */
    unsubscribedAt: timestamp({ nullable: true }),
    ...stamps,
  },
  {
    unique: [{ name: 'notifications_kind_record', fields: ['kind', 'recordId'] }],
    indexes: [['status', 'nextAttemptAt']],
  },
)

/**
 * Which notifications an affiliate or a campaign has turned off (`turnedOff`), or on when off by
 * default (`turnedOn`, campaigns only); `digest`: an affiliate's `commission.earned` as one e-mail a day.
 * Absent: every default holds.
 */
export const notificationPreferences = model({
  /** The affiliate's or the campaign's id. */
  id: text(),
  workspaceId: indexedText,
  scope: text({ values: ['affiliate', 'campaign'] }),
  turnedOff: list(),
  turnedOn: list(),
  digest: bool(),
  ...stamps,
})
