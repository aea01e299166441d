import { AffiliateError } from '../errors.js'
import { refusal, type FieldErrors } from '../site/forms.js'
import { PageError } from '../site/page-error.js'
import type { Routes } from '../site/router.js'
import type { Visit } from '../site/visit.js'
import { isUuid } from '../uuid.js'
import type { Portal } from './context.js'
import { joinedPage, joinPage } from './pages.js'

/** A campaign's join page: anyone may apply; a sign-in link follows. */
export function joinPages(p: Portal): Routes<Visit> {
  const { api, frameOf, countForm, offerLink } = p

  async function join(v: Visit): Promise<Response> {
    // A campaign id is a UUID, which needs no decoding; anything else is answered 404.
    const { campaignId = '' } = v.params
    const campaign = isUuid(campaignId)
      ? await api.campaigns.get(campaignId).catch((error: unknown) => {
          if (error instanceof AffiliateError && error.code === 'not_found') return null
          throw error
        })
      : null
    if (!campaign)
      throw new PageError(404, 'Program not found', 'There is no affiliate program at this address. Check the link you were given.')
    if (v.request.method !== 'POST') return v.page(joinPage(frameOf(v), { campaign }))
    countForm(v)
    const sent = await v.form()
    const values = Object.fromEntries(['email', 'firstName', 'lastName', 'website', 'about'].map((name) => [name, sent.get(name)]))
    const info = campaign.collectAdditionalInfo ? { website: values.website!, about: values.about! } : null
    const errors: FieldErrors = {}
    if (info && info.website.length > 500) errors.website = 'website must be at most 500 characters'
    if (info && info.about.length > 2000) errors.about = 'about must be at most 2000 characters'
    if (Object.keys(errors).length === 0) {
      try {
        await api.affiliates.create({
          email: values.email!,
          campaignId: campaign.id,
          firstName: values.firstName!,
          lastName: values.lastName!,
          details: info && (info.website || info.about) ? JSON.stringify(info) : null,
        })
      } catch (error) {
        const known = error instanceof AffiliateError && error.code === 'duplicate'
        // Already in the campaign: answered like a new member (a sign-in link goes to the address), so the form tells nobody who is in.
        if (!known) Object.assign(errors, refusal(error, ['email', 'firstName', 'lastName']).errors)
        if (!known && Object.keys(errors).length === 0) throw error
      }
    }
    if (Object.keys(errors).length > 0) return v.page(joinPage(frameOf(v), { campaign, values, errors }), 400)
    await offerLink(v, values.email!)
    return v.page(joinedPage(frameOf(v), campaign, values.email!))
  }

  return { 'GET /join/:campaignId': join, 'POST /join/:campaignId': join }
}
