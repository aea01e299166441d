/**
 * An e-mail with most of it hidden, for campaigns with `hideCustomerEmail`: the first character of
 * the name and of the domain, and the domain's last label (`jane.doe@example.com` -> `j•••@e•••.com`).
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@')
  if (at < 0) return `${email.slice(0, 1)}•••`
  const domain = email.slice(at + 1)
  const dot = domain.lastIndexOf('.')
  const top = dot > 0 ? domain.slice(dot) : ''
  return `${email.slice(0, 1)}•••@${domain.slice(0, 1)}•••${top}`
}
