import { html, type Html } from '../site/html.js'
import { csrfField } from '../site/forms.js'
import { PageError } from '../site/page-error.js'
import type { Routes } from '../site/router.js'
import type { Visit } from '../site/visit.js'
import { AFFILIATE_KINDS, KINDS, type NotificationKind } from '../notifications/kinds.js'
import { notificationPreferences, type AffiliateChoice } from '../notifications/preferences.js'
import { unsubscribe, validToken } from '../notifications/unsubscribe.js'
import type { Portal } from './context.js'
import { layout } from './layout.js'
import { messagePage } from './pages.js'

// The affiliate's e-mail choices: a card on the dashboard (signed in), and the one-click
// unsubscribe link of every message (no sign-in: its signature is the authority, RFC 8058).

/** The dashboard's card: each kind on or off, and `commission.earned` each time or as a daily digest. */
export function notificationsCard(csrf: string, path: string, choice: AffiliateChoice): Html {
  const row = (kind: NotificationKind) =>
    html`<div><input type="checkbox" id="notify-${kind}" name="on" value="${kind}"${choice.off.includes(kind) ? '' : html` checked`}> <label for="notify-${kind}">${KINDS[kind].label}</label></div>`
  return html`<section class="card" id="notifications" aria-labelledby="notifications-title"><h2 id="notifications-title">E-mails</h2>
<form method="post" action="${path}/notifications">
${csrfField(csrf)}
<fieldset><legend>Send me an e-mail when</legend>${AFFILIATE_KINDS.map(row)}</fieldset>
<fieldset><legend>Commission e-mails</legend>
<div><input type="radio" id="digest-no" name="digest" value="no"${choice.digest ? '' : html` checked`}> <label for="digest-no">One for each commission</label></div>
<div><input type="radio" id="digest-yes" name="digest" value="yes"${choice.digest ? html` checked` : ''}> <label for="digest-yes">One a day, listing the day's commissions</label></div>
</fieldset>
<div class="actions"><button type="submit">Save e-mail choices</button></div>
</form>
</section>`
}

export function notificationPages(p: Portal): Routes<Visit> {
  const { config, path, frameOf, signedIn, storage, clock } = p
  const preferences = notificationPreferences(storage, clock)

  async function save(v: Visit): Promise<Response> {
    const sent = await v.form()
    const who = await signedIn(v)
    if (who instanceof Response) return who
    const on = sent.all('on')
    const digest = sent.get('digest')
    if (digest !== 'yes' && digest !== 'no')
      throw new PageError(400, 'Not saved', 'Choose how commission e-mails come: one for each, or one a day.', {
        href: `${path}#notifications`,
        label: 'Back to your dashboard',
      })
    await preferences.setAffiliate(who.affiliate, { off: AFFILIATE_KINDS.filter((kind) => !on.includes(kind)), digest: digest === 'yes' })
    return v.redirect(`${path}?notice=notifications-saved#notifications`)
  }

  /** The link's page: what it stops, and a button (a link scanner's GET changes nothing). */
  function confirm(v: Visit): Response {
    const id = v.url.searchParams.get('id') ?? ''
    const token = v.url.searchParams.get('token') ?? ''
    if (!validToken(config.key, id, token)) throw invalid()
    const action = `${path}/unsubscribe?id=${encodeURIComponent(id)}&token=${encodeURIComponent(token)}`
    return v.page(
      layout(
        frameOf(v),
        'Stop these e-mails',
        html`<div class="narrow"><h1>Stop these e-mails</h1><div class="card">
<p>Stop the e-mails like the one this link came in? You can turn them on again in your dashboard.</p>
<form method="post" action="${action}"><div class="actions"><button type="submit">Stop these e-mails</button></div></form>
</div></div>`,
      ),
    )
  }

  async function perform(v: Visit): Promise<Response> {
    const id = v.url.searchParams.get('id') ?? ''
    const token = v.url.searchParams.get('token') ?? ''
    const done = await unsubscribe(storage, clock, config.key, id, token)
    if (done.outcome === 'invalid') throw invalid()
    const what = KINDS[done.kind].label.toLowerCase()
    if (done.outcome === 'used') {
      return v.page(
        messagePage(
          frameOf(v),
          'Link already used',
          `This link has been used: e-mails of this kind ("${what}") are already off. Sign in to your dashboard to change your choices.`,
          { href: `${path}/sign-in`, label: 'Sign in' },
        ),
        410,
      )
    }
    return v.page(
      messagePage(
        frameOf(v),
        'You are unsubscribed',
        `You will no longer get e-mails of this kind ("${what}"). Sign in to your dashboard to choose others.`,
        { href: `${path}/sign-in`, label: 'Sign in' },
      ),
    )
  }

  return { 'POST /notifications': save, 'GET /unsubscribe': confirm, 'POST /unsubscribe': perform }
}

const invalid = () =>
  new PageError(404, 'Link not valid', 'This unsubscribe link is not valid. Sign in to your dashboard to choose which e-mails you get.')
