import { Html, html } from './html.js'
import { SCRIPT } from './styles.js'

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

/** The hidden CSRF field of a form. */
export const csrfField = (frame: Frame): Html => html`<input type="hidden" name="csrf" value="${frame.csrf}">`

/** A whole page: one style sheet and one script, both inline (the CSP allows them by hash). */
export function layout(frame: Frame, title: string, main: Html): string {
  const signOut = frame.signedInAs
    ? html`<span class="who">Signed in as ${frame.signedInAs}</span>
<form class="inline" method="post" action="${frame.path}/sign-out">${csrfField(frame)}<button class="quiet" type="submit">Sign out</button></form>`
    : ''
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · ${frame.site}</title>
<style>${new Html(frame.style)}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><div class="bar"><a class="brand" href="${frame.path}">${frame.site}</a>${signOut}</div></header>
<main id="main" class="wrap">
${main}
</main>
<script>${new Html(SCRIPT)}</script>
</body>
</html>
`.value
}
