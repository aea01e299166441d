import type { Affiliate } from '../domain/affiliate.js'
import { refusal } from '../site/forms.js'
import { PageError } from '../site/page-error.js'
import type { Routes } from '../site/router.js'
import type { Visit } from '../site/visit.js'
import type { Portal } from './context.js'
import { notificationPreferences } from '../notifications/preferences.js'
import { notificationsCard } from './notifications.js'
import { dashboardPage, PAYOUT_METHODS, type DashboardView } from './pages.js'

/** The signed-in affiliate's dashboard, and its two forms: a new link, the payout settings. */
export function dashboardPages(p: Portal): Routes<Visit> {
  const { api, clock, config, onError, path, frameOf, eligible, signedIn } = p
  const preferences = notificationPreferences(p.storage, clock)

  /**
   * Tells the old payout e-mail and the account's e-mail that the payout e-mail changed from
   * `before`'s to `after`, so an owner who did not change it (someone else signed in) hears of it.
   * Not awaited: a failing `sendNotice` goes to `onError`.
   */
  function noticePayoutEmail(v: Visit, before: Affiliate, after: string, programName: string): void {
    const old = before.payoutEmail
    const to = new Map([old, before.email].filter((email) => email !== '').map((email) => [email.toLowerCase(), email]))
    const subject = `Your payout e-mail for the ${programName} affiliate program was changed`
    const text = [
      `The payout e-mail of your affiliate account ${before.email} in the ${programName} affiliate program was changed`,
      `from ${old || '(none)'} to ${after || '(none)'} at ${new Date(clock.now()).toISOString()}.`,
      'Payouts go to the new address from now on.',
      '',
      `If you did not make this change, sign in at ${config.publicUrl}${path}/sign-in, set your payout e-mail back, and tell the ${programName} team.`,
    ].join('\n')
    for (const email of to.values()) {
      Promise.resolve()
        .then(() => config.sendNotice(email, subject, text))
        .catch((error: unknown) => onError(error, v.request))
    }
  }

  async function dashboard(v: Visit, failed?: DashboardView['failed'], status = 200): Promise<Response> {
    const who = await signedIn(v)
    if (who instanceof Response) return who
    const { affiliate, session } = who
    const pageNumber = Number(v.url.searchParams.get('page') ?? '1')
    const page_ = Number.isSafeInteger(pageNumber) && pageNumber >= 1 && pageNumber <= 100_000 ? pageNumber : 1
    const [campaign, links, codes, commissions, balance, payouts, choices, emails] = await Promise.all([
      api.campaigns.get(affiliate.campaignId),
      api.links.list({ affiliateId: affiliate.id }),
      api.promoCodes.list({ affiliateId: affiliate.id, limit: 100 }),
      api.commissions.list({ affiliateId: affiliate.id, page: page_, limit: 10 }),
      api.affiliates.balance(affiliate.id),
      api.payouts.list({ affiliateId: affiliate.id, limit: 10 }),
      eligible(session.email),
      p.notifying ? preferences.ofAffiliate(affiliate.id) : null,
    ])
    const notice = v.notice()
    const view: DashboardView = {
      affiliate,
      campaign,
      shareBase: `${config.publicUrl}${p.basePath}/r/`,
      links: links.items,
      promoCodes: codes.items,
      commissions,
      balance,
      payouts: payouts.items,
      canSwitch: choices.length > 1,
      ...(emails ? { notifications: notificationsCard(v.csrf, path, emails) } : {}),
      ...(notice && !failed ? { notice } : {}),
      ...(failed ? { failed } : {}),
    }
    return v.page(dashboardPage(frameOf(v), view), status)
  }

  async function makeLink(v: Visit): Promise<Response> {
    const sent = await v.form()
    const who = await signedIn(v)
    if (who instanceof Response) return who
    const values = { referralCode: sent.get('referralCode'), urlParameter: sent.get('urlParameter') }
    if (!who.affiliate.isActive)
      throw new PageError(403, 'Awaiting approval', 'You can make links once your account is approved.', {
        href: path,
        label: 'Back to your dashboard',
      })
    try {
      await api.links.create({
        affiliateId: who.affiliate.id,
        ...(values.referralCode ? { referralCode: values.referralCode } : {}),
        ...(values.urlParameter ? { urlParameter: values.urlParameter } : {}),
      })
    } catch (error) {
      const { problem, errors, status } = refusal(error, ['referralCode', 'urlParameter'])
      return dashboard(v, { form: 'link', problem, errors, values }, status)
    }
    return v.redirect(`${path}?notice=link-created#links`)
  }

  async function saveSettings(v: Visit): Promise<Response> {
    const sent = await v.form()
    const who = await signedIn(v)
    if (who instanceof Response) return who
    const values = { payoutEmail: sent.get('payoutEmail'), payoutMethod: sent.get('payoutMethod') }
    const method = PAYOUT_METHODS.find(([value]) => value === values.payoutMethod)?.[0] ?? null
    if (values.payoutMethod !== '' && method === null) {
      return dashboard(
        v,
        {
          form: 'settings',
          problem: 'Please correct the following:',
          errors: { payoutMethod: 'Choose a payout method from the list' },
          values,
        },
        400,
      )
    }
    let saved: Affiliate
    try {
      saved = await api.affiliates.update(who.affiliate.id, { payoutEmail: values.payoutEmail, payoutMethod: method })
    } catch (error) {
      const { problem, errors, status } = refusal(error, ['payoutEmail', 'payoutMethod'])
      return dashboard(v, { form: 'settings', problem, errors, values }, status)
    }
    if (saved.payoutEmail.toLowerCase() !== who.affiliate.payoutEmail.toLowerCase()) {
      const campaign = await api.campaigns.get(who.affiliate.campaignId)
      noticePayoutEmail(v, who.affiliate, saved.payoutEmail, await p.programNameOf(campaign.workspaceId, campaign.campaignName))
    }
    return v.redirect(`${path}?notice=settings-saved#settings`)
  }

  return {
    'GET /': (v) => dashboard(v),
    'POST /links': makeLink,
    'POST /settings': saveSettings,
  }
}
