import * as check from '../checks.js'
import { model } from '../describe.js'
import { bool, editable, indexedText, int, list, money, stamps, text } from './fields.js'

export const PAYOUT_METHODS = ['PAYPAL', 'WISE', 'BANK_TRANSFER'] as const
export const PAYOUT_METHOD_LABELS = { PAYPAL: 'PayPal', WISE: 'Wise', BANK_TRANSFER: 'Bank transfer' } as const

/** An affiliate's standing, as lists filter by it: `pending` is awaiting approval (not active, not banned). */
export const AFFILIATE_STATUSES = ['active', 'pending', 'banned'] as const
export const affiliateStatus = check.oneOf(AFFILIATE_STATUSES)

/** The counters of an affiliate and of a link, moved by tracking and commissions. */
export const totals = { totalOpens: int(), totalClicks: int(), totalSignups: int(), totalEarningsMinor: money('totalEarnings') }

export const affiliates = model(
  {
    id: text(),
    workspaceId: text({ indexed: true, input: check.uuid, create: 'optional' }),
    email: text({ searched: true, input: check.email, create: 'required', filter: true }),
    /** Lower-cased `email`: what uniqueness and look-ups use. */
    emailKey: indexedText,
    campaignId: text({ indexed: true, input: check.uuid, create: 'required', filter: true }),
    firstName: text({ searched: true, input: check.text(100), ...editable, default: '', form: { label: 'First name' } }),
    lastName: text({ searched: true, input: check.text(100), ...editable, default: '', form: { label: 'Last name' } }),
    notes: text({ input: check.text(5000), ...editable, default: '', form: { label: 'Notes', control: 'textarea' } }),
    payoutEmail: text({
      description: 'The empty string when unset.',
      input: check.optionalEmail,
      ...editable,
      default: '',
      form: { label: 'Payout e-mail', control: 'email' },
    }),
    payoutMethod: text({
      nullable: true,
      values: PAYOUT_METHODS,
      description: 'null until chosen.',
      ...editable,
      default: null,
      form: { label: 'Payout method', options: PAYOUT_METHOD_LABELS, none: 'Not chosen' },
    }),
    details: text({
      nullable: true,
      input: check.nullable(check.text(5000)),
      ...editable,
      default: null,
      // What they said when they applied: the admin shows it on their page, read-only (no form control).
    }),
    // Set by their own actions (approve, ban), each asking for confirmation: in no form.
    isActive: bool({ ...editable }),
    isBanned: bool({ ...editable, default: false }),
    /**
     * The device hashes (client address and user agent under the day's click salt, src/tracking/visitor.ts)
     * the affiliate used the portal from, the latest last (at most 20): what `self_referral` compares a
     * customer's click with. In no answer.
     */
    portalDevices: list({ default: [] }),
    /**
     * What `refund_rate` read of the affiliate's report rollups, kept so a sale reads one row rather
     * than 90: `[day, sales, refunded]`, its sales and those refunded in full over the window's days
     * before `day` (YYYY-MM-DD); [] when not kept. A write that moves those figures on an earlier day
     * (a refund of an older sale, a sale dated in the past, a delete) empties it (src/reports/rollup.ts).
     */
    refundWindow: list({ default: [] }),
    ...totals,
    ...stamps,
  },
  {
    unique: [{ name: 'affiliates_campaign_email', fields: ['campaignId', 'emailKey'] }],
    // The admin's top affiliates: a workspace's highest earners, not a sort of all its affiliates.
    ordered: [{ where: ['workspaceId'], orderBy: 'totalEarningsMinor' }],
    answers: {
      affiliate: [
        'id',
        'email',
        'firstName',
        'lastName',
        'notes',
        'workspaceId',
        'campaignId',
        'payoutEmail',
        'payoutMethod',
        'details',
        'isActive',
        'isBanned',
        'totalOpens',
        'totalClicks',
        'totalSignups',
        'totalEarningsMinor',
        'createdAt',
        'updatedAt',
      ],
    },
    list: {
      orderBy: [
        'createdAt',
        'updatedAt',
        'email',
        'firstName',
        'lastName',
        'totalEarningsMinor',
        'totalSignups',
        'totalClicks',
        'totalOpens',
      ],
      filters: { status: affiliateStatus },
    },
  },
)
