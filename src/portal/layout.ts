import { html, type Html } from '../site/html.js'
import { csrfField } from '../site/forms.js'
import { SCRIPT_PATH } from '../site/script.js'
import { documentShell } from '../site/shell.js'

/** What every page of one request shares. */
export interface Frame {
  /** The portal's path, e.g. `/portal`. */
  path: string
  /** The portal's name (`title` option). */
  site: string
  /** The style sheet with the host's theme. */
  style: string
  /** The CSRF token every form carries. */
  csrf: string
  /** The signed-in affiliate's e-mail, when there is one: the header then offers signing out. */
  signedInAs?: string
}

/** A whole page: the header with the portal's name (and signing out), then `main`. */
export function layout(frame: Frame, title: string, main: Html): string {
  const signOut = frame.signedInAs
    ? html`<span class="who">Signed in as ${frame.signedInAs}</span>
<form class="inline" method="post" action="${frame.path}/sign-out">${csrfField(frame.csrf)}<button class="quiet" type="submit">Sign out</button></form>`
    : ''
  return documentShell({
    title: `${title} · ${frame.site}`,
    style: frame.style,
    body: html`<header class="top"><div class="bar"><a class="brand" href="${frame.path}">${frame.site}</a>${signOut}</div></header>
<main id="main" class="wrap">
${main}
</main>`,
    script: `${frame.path}${SCRIPT_PATH}`,
  })
}
