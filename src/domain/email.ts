// One e-mail address, one person: the form the fraud rules compare addresses in (SPEC wave 4,
// "Fraud rules and the hold status"). Mailbox providers route many spellings to one inbox.

/** Domains whose mailboxes ignore dots in the local part (Gmail's, under both its names). */
const DOTLESS_DOMAINS: ReadonlySet<string> = new Set(['gmail.com', 'googlemail.com'])

/**
 * The address in the one form all its spellings share: trimmed and lower case, the `+tag` of the
 * local part removed, and, for gmail.com and googlemail.com, the local part's dots removed and the
 * domain written gmail.com (both names reach one mailbox). A trailing dot of the domain goes too.
 * A value without `@` is answered trimmed and lower case (it names no mailbox to fold).
 */
export function normaliseEmail(address: string): string {
  const lower = address.trim().toLowerCase()
  const at = lower.lastIndexOf('@')
  if (at <= 0 || at === lower.length - 1) return lower
  let local = lower.slice(0, at)
  let domain = lower.slice(at + 1).replace(/\.+$/, '')
  const plus = local.indexOf('+')
  if (plus > 0) local = local.slice(0, plus)
  if (DOTLESS_DOMAINS.has(domain)) {
    local = local.replaceAll('.', '')
    domain = 'gmail.com'
  }
  return `${local}@${domain}`
}

/** The domain of an address, lower case without a trailing dot; '' when it has none. */
export function emailDomain(address: string): string {
  const lower = address.trim().toLowerCase()
  const at = lower.lastIndexOf('@')
  return at < 0 ? '' : lower.slice(at + 1).replace(/\.+$/, '')
}
