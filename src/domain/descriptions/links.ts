import * as check from '../checks.js'
import { model } from '../describe.js'
import { totals } from './affiliates.js'
import { indexedText, nullableText, stamps, text } from './fields.js'

export const REFERRAL_CODE = /^[A-Za-z0-9_-]{3,64}$/

export const referralCode = check.check<string>(
  'referralCode',
  { type: 'string', pattern: REFERRAL_CODE.source },
  (value) => (typeof value === 'string' && REFERRAL_CODE.test(value)) || 'must be 3 to 64 letters, digits, _ or -',
)

export const links = model(
  {
    id: text(),
    workspaceId: indexedText,
    campaignId: text(),
    affiliateId: text({ indexed: true, input: check.uuid, create: 'required' }),
    /** The user of the API key that created it; null when created through the trusted `service.api`. */
    userId: nullableText,
    referralCode: text({ indexed: true, searched: true, unique: 'links_referral_code', input: referralCode, create: 'optional' }),
    urlParameter: text({ input: check.text(64, { min: 1 }), create: 'optional' }),
    /** The campaign url with `<urlParameter>=<referralCode>` set in its query. */
    url: text(),
    /**
     * A link on the host's own site: the campaign url with `via=<referralCode>` set in its query,
     * which the beacon on the host's pages counts (SPEC wave 4, "Promo codes").
     */
    shareUrl: text({
      description: "The campaign url with via=<referralCode>: a link on the host's own site, counted by the beacon on its pages.",
    }),
    ...totals,
    ...stamps,
  },
  {
    answers: {
      link: [
        'id',
        'referralCode',
        'url',
        'shareUrl',
        'urlParameter',
        'userId',
        'affiliateId',
        'campaignId',
        'totalOpens',
        'totalClicks',
        'totalSignups',
        'totalEarningsMinor',
        'createdAt',
        'updatedAt',
      ],
    },
  },
)
