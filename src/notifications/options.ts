import type { NotificationKind } from './kinds.js'

/** One e-mail, ready for any mailer: `to` may name several addresses, separated by commas. */
export interface NotificationMessage {
  /** The notification's id: the same on every retry (also in the `Message-ID` header). */
  id: string
  kind: NotificationKind
  to: string
  /** `notify.from`, when given. */
  from?: string
  subject: string
  text: string
  html: string
  /**
   * `Message-ID`, and on affiliates' messages `List-Unsubscribe` (a signed one-click link, RFC 8058)
   * with `List-Unsubscribe-Post` when the portal is on.
   */
  headers: Record<string, string>
}

/** A message's words, as `render` may give them (any part left out keeps the default's). */
export interface RenderedText {
  subject: string
  text: string
  html: string
}

/**
 * What a kind's text may say, handed to `render`. Amounts are formatted with their currency
 * (`amount`, e.g. `$12.50`) and given in minor units too (`amountMinor`, `currency`).
 */
export interface NotificationData {
  kind: NotificationKind
  /** `notify.programName`, else the name of the workspace's default campaign. */
  programName: string
  /** The affiliate it goes to (affiliates' kinds), or the applicant (`affiliate.applied`). */
  affiliate?: { email: string; firstName: string; lastName: string }
  /** The portal's dashboard, when the portal is on. */
  portalUrl: string | null
  /** The admin's page for this notice (owners' kinds), when the admin and the portal's public URL are on. */
  adminUrl: string | null
  /** The signed one-click unsubscribe link (affiliates' kinds, portal on). */
  unsubscribeUrl: string | null
  amount?: string
  amountMinor?: number
  currency?: string
  /** `commission.earned`: the referred customer (masked when the campaign hides customers' e-mails). */
  customer?: string | null
  /** `commission.earned` as a daily digest: each commission (the `amount` is then their total, per currency). */
  items?: { amount: string; amountMinor: number; currency: string; commissionDate: string; customer: string | null }[]
  /** The digest's UTC day (`2026-03-10`). */
  day?: string
  /** `payout.paid`: the payout's `externalReference`, how many commissions it pays, how and where. */
  reference?: string | null
  commissionCount?: number
  payoutMethod?: string | null
  payoutEmail?: string | null
  /** `affiliate.applied`: the campaign applied to. */
  campaignName?: string
  /** `integration.failing`: the integration, its provider, how many failures since when. */
  integration?: { integrationId: string; provider: string; description: string; failures: number; since: string }
}

/** The development mailbox's contract: what `/admin/settings/mail` lists. */
export interface MailboxReader {
  messages(): readonly MailboxMessage[]
}

/** A message kept by the development mailbox. */
export interface MailboxMessage {
  to: string
  from?: string
  subject: string
  text: string
  html?: string
  headers?: Record<string, string>
  receivedAt: string
}

/** `createAffiliateService({ notify })`: e-mails to affiliates and owners (see docs/notifications.md). */
export interface NotifyOptions {
  /**
   * Sends one message; a rejection (or a throw) is a failed attempt, retried with backoff and
   * reported to `onError` (`source: 'notify'`). It never fails the change that caused the message.
   * Optional when `mailbox` is given (the messages then go there).
   * @example send: (m) => transport.sendMail({ from: m.from, to: m.to, subject: m.subject, text: m.text, html: m.html, headers: m.headers })
   */
  send?: (message: NotificationMessage) => void | Promise<void>
  /** The owners' addresses (`affiliate.applied`, `integration.failing`); else those set in the admin's Settings → E-mail. */
  owners?: readonly string[]
  /** The sender, e.g. `Partners <partners@example.com>`: put in each message's `from`. */
  from?: string
  /** The program's name in every text. @default the name of the workspace's default campaign */
  programName?: string
  /**
   * Overrides a kind's words: answer the parts to replace (`subject`, `text`, `html`), or nothing
   * to keep the defaults. A throw is a failed attempt.
   */
  render?: (
    kind: NotificationKind,
    data: NotificationData,
  ) => Partial<RenderedText> | null | undefined | Promise<Partial<RenderedText> | null | undefined>
  /** The development mailbox (`developmentMailbox()`): messages go there (unless `send` is given) and the admin lists them. */
  mailbox?: MailboxReader & { send(message: NotificationMessage): void }
  /** Wait between looks for due messages, in ms. @default 1000 */
  pollMs?: number
}

export interface ResolvedNotifyOptions {
  send: (message: NotificationMessage) => void | Promise<void>
  owners: readonly string[] | null
  from: string | null
  programName: string | null
  render: NotifyOptions['render'] | null
  mailbox: MailboxReader | null
  pollMs: number
}

const ADDRESS = /^[^\s@<>,]+@[^\s@<>,]+$/

/** Checks `notify` once, at start: a wrong option throws a TypeError naming it. */
export function resolveNotifyOptions(options: NotifyOptions): ResolvedNotifyOptions {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('notify must be an object: { send, owners?, from?, programName?, render? }')
  const mailbox = options.mailbox ?? null
  if (mailbox !== null && (typeof mailbox.messages !== 'function' || typeof mailbox.send !== 'function')) {
    throw new TypeError('notify.mailbox must be a development mailbox, e.g. developmentMailbox()')
  }
  const send = options.send ?? (mailbox ? (message: NotificationMessage) => mailbox.send(message) : undefined)
  if (typeof send !== 'function')
    throw new TypeError('notify.send must be a function (message) => void | Promise<void> (or give notify.mailbox)')
  if (
    options.owners !== undefined &&
    (!Array.isArray(options.owners) || !options.owners.every((o) => typeof o === 'string' && ADDRESS.test(o)))
  ) {
    throw new TypeError('notify.owners must be a list of e-mail addresses')
  }
  for (const name of ['from', 'programName'] as const) {
    const value = options[name]
    if (value !== undefined && (typeof value !== 'string' || value.trim() === '' || value.length > 200))
      throw new TypeError(`notify.${name} must be a non-empty string of at most 200 characters`)
  }
  if (options.render !== undefined && typeof options.render !== 'function')
    throw new TypeError('notify.render must be a function (kind, data) => { subject?, text?, html? }')
  const pollMs = options.pollMs ?? 1000
  if (!Number.isSafeInteger(pollMs) || pollMs < 1 || pollMs > 3_600_000)
    throw new TypeError('notify.pollMs must be a whole number of milliseconds from 1 to 3600000')
  return {
    send,
    owners: options.owners ? [...options.owners] : null,
    from: options.from ?? null,
    programName: options.programName ?? null,
    render: options.render ?? null,
    mailbox,
    pollMs,
  }
}
