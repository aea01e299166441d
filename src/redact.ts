// Connection strings in messages and logs, without their secrets.

const SECRET_PARAM = /^(password|pass|pwd|secret|token|auth|sslpassword)$/i

/**
 * A connection string (`postgres://…`, `redis://…`) fit to print: the password and any query
 * parameter named like one (`password`, `token`, …) become `***`. A string that is not a URL has
 * every `user:password@` and `password=value` in it masked instead.
 *
 * @example redactUrl('redis://:hunter2@cache:6379/0') // 'redis://:***@cache:6379/0'
 */
export function redactUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return url
      .replace(/(\/\/[^/@\s:]*:)[^/@\s]*@/g, '$1***@')
      .replace(/\b(password|pass|pwd|secret|token|auth|sslpassword)=("[^"]*"|'[^']*'|[^\s&;]*)/gi, '$1=***')
  }
  if (parsed.password) parsed.password = '***'
  for (const name of [...parsed.searchParams.keys()]) if (SECRET_PARAM.test(name)) parsed.searchParams.set(name, '***')
  return parsed.href
}
