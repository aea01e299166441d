// The default words of each kind, in plain text and simple HTML. They name the program
// (`programName`), never a campaign as if it were a company; amounts carry their currency.
// `notify.render` may replace any part.

import { html, type Html } from '../site/html.js'
import type { NotificationData, RenderedText } from './options.js'

/** Payout methods and providers as people write them. */
const METHODS: Record<string, string> = { PAYPAL: 'PayPal', WISE: 'Wise', BANK_TRANSFER: 'bank transfer' }
const PROVIDERS: Record<string, string> = { stripe: 'Stripe', paddle: 'Paddle', lemonsqueezy: 'Lemon Squeezy' }

interface Draft {
  subject: string
  /** Paragraphs; a paragraph holding a link names it last, as `[label, url]`. */
  body: (string | [string, string, string?])[]
}

const greeting = (d: NotificationData) => (d.affiliate?.firstName ? `Hi ${d.affiliate.firstName},` : 'Hello,')

function draft(d: NotificationData): Draft {
  const program = d.programName
  const dashboard = (label: string): [string, string, string?] | null => (d.portalUrl ? [label, d.portalUrl] : null)
  const admin = (label: string): [string, string, string?] | null => (d.adminUrl ? [label, d.adminUrl] : null)
  const parts = (...items: (string | [string, string, string?] | null)[]) =>
    items.filter((item): item is string | [string, string, string?] => item !== null)
  switch (d.kind) {
    case 'affiliate.approved':
      return {
        subject: `You are approved: welcome to the ${program} affiliate program`,
        body: parts(
          greeting(d),
          `Your application to the ${program} affiliate program is approved.`,
          dashboard('Sign in to get your referral links:'),
        ),
      }
    case 'affiliate.rejected':
      return {
        subject: `Your application to the ${program} affiliate program`,
        body: parts(
          greeting(d),
          `Thank you for applying to the ${program} affiliate program. We are not able to accept your application at this time.`,
        ),
      }
    case 'commission.earned':
      if (d.items) {
        const count = d.items.length
        return {
          subject: `Your ${program} commissions of ${d.day}: ${d.amount}`,
          body: parts(
            greeting(d),
            `On ${d.day} you earned ${count} commission${count === 1 ? '' : 's'} with ${program}, ${d.amount} in all:`,
            d.items
              .map((item) => `• ${item.amount}${item.customer ? ` (${item.customer})` : ''}, ${item.commissionDate.slice(0, 10)}`)
              .join('\n'),
            dashboard('See them in your dashboard:'),
          ),
        }
      }
      return {
        subject: `You earned ${d.amount} with ${program}`,
        body: parts(
          greeting(d),
          `A referral${d.customer ? ` (${d.customer})` : ''} earned you a commission of ${d.amount} with ${program}. It is paid out once it is due.`,
          dashboard('See it in your dashboard:'),
        ),
      }
    case 'payout.paid': {
      const count = d.commissionCount ?? 0
      const how = d.payoutMethod ? ` by ${METHODS[d.payoutMethod] ?? d.payoutMethod.toLowerCase().replaceAll('_', ' ')}` : ''
      return {
        subject: `${program} sent you ${d.amount}`,
        body: parts(
          greeting(d),
          `Your payout of ${d.amount} for ${count} commission${count === 1 ? '' : 's'} was sent${how}${d.payoutEmail ? ` to ${d.payoutEmail}` : ''}.`,
          d.reference ? `Reference: ${d.reference}` : null,
          dashboard('Your payouts are listed in your dashboard:'),
        ),
      }
    }
    case 'clawback.created':
      return {
        subject: `A refund took back ${d.amount} of your ${program} earnings`,
        body: parts(
          greeting(d),
          `A customer you referred was refunded after your commission for them was paid. ${d.amount} is taken from your next ${program} payout.`,
          dashboard('See it in your dashboard:'),
        ),
      }
    case 'affiliate.applied': {
      const a = d.affiliate
      const name = a ? [a.firstName, a.lastName].filter(Boolean).join(' ') : ''
      return {
        subject: `New affiliate application: ${a?.email ?? 'someone'}`,
        body: parts(
          `${name ? `${name} (${a?.email})` : (a?.email ?? 'Someone')} applied to the campaign "${d.campaignName ?? ''}" of ${program}, which requires approval.`,
          admin('Approve or reject the application:'),
        ),
      }
    }
    case 'integration.failing': {
      const i = d.integration
      const provider = i ? (PROVIDERS[i.provider] ?? i.provider) : 'payment provider'
      const what = i
        ? `The ${provider} endpoint${i.description ? ` "${i.description}"` : ''} (integration ${i.integrationId})`
        : 'A payment provider endpoint'
      return {
        subject: `${program}: a ${provider} endpoint keeps failing`,
        body: parts(
          `${what} answered an error or refused a bad signature ${i?.failures ?? 5} times within an hour, since ${i?.since ?? ''}. Sales and refunds from it may be missing until it is fixed: check its signing secret and the event log.`,
          admin('The event log:'),
        ),
      }
    }
  }
}

const footer = (d: NotificationData): Draft['body'] =>
  d.affiliate && d.kind !== 'affiliate.applied'
    ? [
        `You receive this as an affiliate of ${d.programName}.`,
        ...(d.unsubscribeUrl ? [['Stop these e-mails:', d.unsubscribeUrl, 'unsubscribe'] as [string, string, string]] : []),
      ]
    : []

/** The default subject, text and HTML of a notification. */
export function renderDefault(d: NotificationData): RenderedText {
  const { subject, body } = draft(d)
  const end = footer(d)
  const text = [...body, ...(end.length ? ['--', ...end] : [])].map((p) => (typeof p === 'string' ? p : `${p[0]} ${p[1]}`)).join('\n\n')
  const paragraph = (p: Draft['body'][number]): Html =>
    typeof p === 'string'
      ? html`<p>${p.split('\n').map((line, i) => (i === 0 ? html`${line}` : html`<br>${line}`))}</p>`
      : html`<p>${p[0]} <a href="${p[1]}">${p[2] ?? p[1]}</a></p>`
  const page = html`<!doctype html><html><head><meta charset="utf-8"><title>${subject}</title></head><body style="font-family:system-ui,sans-serif;line-height:1.5;max-width:36rem">${body.map(paragraph)}${end.length ? html`<hr><div style="color:#555;font-size:0.875em">${end.map(paragraph)}</div>` : ''}</body></html>`
  return { subject, text, html: page.value }
}
