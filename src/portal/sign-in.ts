import { refusal } from '../site/forms.js'
import { PageError } from '../site/page-error.js'
import type { Routes } from '../site/router.js'
import type { Visit } from '../site/visit.js'
import type { Portal } from './context.js'
import { choosePage, confirmPage, signInPage, signInSentPage, type Choice } from './pages.js'

/** Signing in by e-mailed link, choosing one of the e-mail's programs, signing out. */
export function signInPages(p: Portal): Routes<Visit> {
  const { api, path, tokens, sessions, frameOf, countForm, eligible, offerLink } = p

  function signInForm(v: Visit): Response {
    const notice = v.notice()
    return v.page(signInPage(frameOf(v), notice ? { notice } : {}))
  }

  async function signIn(v: Visit): Promise<Response> {
    countForm(v)
    const email = (await v.form()).get('email')
    try {
      await offerLink(v, email)
    } catch (error) {
      const { errors } = refusal(error, ['email'])
      return v.page(signInPage(frameOf(v), { email, errors: { email: errors.email ?? 'Enter a valid e-mail address' } }), 400)
    }
    return v.page(signInSentPage(frameOf(v), email))
  }

  const linkGone = () =>
    new PageError(400, 'Link no longer valid', 'This sign-in link is no longer valid: each link works once, for 15 minutes.', {
      href: `${path}/sign-in`,
      label: 'Get a new link',
    })

  async function confirmForm(v: Visit): Promise<Response> {
    const token = v.url.searchParams.get('token') ?? ''
    if (!/^[A-Za-z0-9_-]{43}$/.test(token) || !(await tokens.linkWorks(token))) throw linkGone()
    return v.page(confirmPage(frameOf(v), token))
  }

  async function confirm(v: Visit): Promise<Response> {
    const token = (await v.form()).get('token')
    const email = /^[A-Za-z0-9_-]{43}$/.test(token) ? await tokens.useLink(token) : null
    if (email === null) throw linkGone()
    const choices = await eligible(email)
    if (choices.length === 0) throw new PageError(403, 'Cannot sign in', 'This account cannot sign in.')
    await sessions.start(v, email, choices.length === 1 ? choices[0]!.id : null)
    return v.redirect(choices.length === 1 ? path : `${path}/choose`)
  }

  async function choose(v: Visit): Promise<Response> {
    const session = await sessions.get(v)
    if (!session) return v.redirect(`${path}/sign-in`)
    const affiliates = await eligible(session.email)
    if (v.request.method === 'POST') {
      const chosen = (await v.form()).get('affiliateId')
      // Only one of this session's own affiliates: any other id is refused like an unknown one.
      if (!affiliates.some((affiliate) => affiliate.id === chosen))
        throw new PageError(404, 'Not found', 'There is no such program for your account.')
      await tokens.choose(session, chosen)
      return v.redirect(path)
    }
    if (affiliates.length === 0) {
      await sessions.end(v)
      return v.page(signInPage(frameOf(v), { problem: 'This account cannot sign in.' }), 403)
    }
    v.signedInAs = affiliates[0]!.email
    const choices: Choice[] = await Promise.all(
      affiliates.map(async (affiliate) => ({ affiliate, campaign: await api.campaigns.get(affiliate.campaignId) })),
    )
    return v.page(choosePage(frameOf(v), choices))
  }

  async function signOut(v: Visit): Promise<Response> {
    await v.form()
    await sessions.end(v)
    return v.redirect(`${path}/sign-in?notice=signed-out`)
  }

  return {
    'GET /sign-in': signInForm,
    'POST /sign-in': signIn,
    'GET /sign-in/confirm': confirmForm,
    'POST /sign-in/confirm': confirm,
    'GET /choose': choose,
    'POST /choose': choose,
    'POST /sign-out': signOut,
  }
}
