import * as check from '../checks.js'
import { model } from '../describe.js'
import { PAYOUT_METHODS } from './affiliates.js'
import { indexedText, int, money, stamps, text, timestamp } from './fields.js'

export const PAYOUT_STATUSES = ['pending', 'processing', 'paid', 'failed', 'canceled'] as const

/** Money on its way to one affiliate: the due commissions of one campaign, netted, made by a payout run. */
export const payouts = model(
  {
    id: text({ answerAs: 'payoutId' }),
    workspaceId: indexedText,
    campaignId: text({ indexed: true, filter: check.uuid }),
    affiliateId: text({ indexed: true, filter: check.uuid }),
    currency: text(),
    /** The sum of its commissions (clawbacks are negative); above zero when made. */
    amountMinor: money('amount', { wire: 'string' }),
    commissionCount: int(),
    // `PUT /payouts` is a move of its status, with what the payment system said.
    status: text({ values: PAYOUT_STATUSES, update: 'required', filter: true, form: { label: 'New status' } }),
    payoutMethod: text({ values: PAYOUT_METHODS, description: 'Copied from the affiliate when made.' }),
    payoutEmail: text({ searched: true, description: 'Copied from the affiliate when made.' }),
    periodEnd: timestamp({ description: "The run's asOf: the commissions due by then are in it." }),
    externalReference: text({
      nullable: true,
      searched: true,
      input: check.nullable(check.text(255, { min: 1 })),
      update: 'optional',
      form: { label: 'Reference of the payment', hint: 'E.g. the PayPal or bank transaction id (for paid).' },
    }),
    failureReason: text({
      nullable: true,
      input: check.nullable(check.text(1000, { min: 1 })),
      update: 'optional',
      form: { label: 'Why it failed', hint: 'For failed.' },
    }),
    paidAt: timestamp({ nullable: true }),
    ...stamps,
  },
  {
    indexes: [['workspaceId', 'status']],
    answers: {
      payout: [
        'id',
        'workspaceId',
        'campaignId',
        'affiliateId',
        'currency',
        'amountMinor',
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
      ],
    },
    list: { orderBy: ['createdAt', 'updatedAt', 'amountMinor', 'status'] },
  },
)
