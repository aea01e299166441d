import type { MailboxMessage, MailboxReader } from './options.js'

/** What `developmentMailbox` keeps of a message: any mail with a recipient, subject and text. */
export type MailboxInput = Omit<MailboxMessage, 'receivedAt'>

export interface DevelopmentMailbox extends MailboxReader {
  /** Keeps `message` (the newest first, at most `keep`) and hands it to `log`. */
  send(message: MailboxInput): void
}

/**
 * A mailbox for development: messages are kept in this process (the newest `keep`) for the admin's
 * Settings → E-mail page, and each is handed to `log` (a logger of yours). Nothing leaves the
 * machine; `npm start` uses it when `SMTP_URL` is unset. Not for production: sign-in links are in it.
 * @example const mailbox = developmentMailbox({ log: (m) => logger.info(m.subject) }); createAffiliateService({ ..., notify: { mailbox } })
 */
export function developmentMailbox(
  options: { keep?: number; log?: (message: MailboxMessage) => void; now?: () => number } = {},
): DevelopmentMailbox {
  const keep = options.keep ?? 100
  if (!Number.isSafeInteger(keep) || keep < 1) throw new TypeError('developmentMailbox: keep must be a whole number of at least 1')
  const kept: MailboxMessage[] = []
  const now = options.now ?? Date.now
  return {
    send(message) {
      const received: MailboxMessage = { ...message, receivedAt: new Date(now()).toISOString() }
      kept.unshift(received)
      if (kept.length > keep) kept.length = keep
      options.log?.(received)
    },
    messages: () => [...kept],
  }
}
