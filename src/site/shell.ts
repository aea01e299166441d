import { Html, html } from './html.js'

export interface DocumentParts {
  /** The `<title>`. */
  title: string
  /** The one style sheet, inline (the CSP allows it by hash). */
  style: string
  /** What stands after the skip link: the header, `<main id="main">` and any footer. */
  body: Html
  /** The site's script file (a path of this origin), loaded last. */
  script: string
}

/** The document around every page of the portal and the admin: one style sheet, the one script last. */
export function documentShell(parts: DocumentParts): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${parts.title}</title>
<style>${new Html(parts.style)}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${parts.body}
<script src="${parts.script}" defer></script>
</body>
</html>
`.value
}

/** A link a page of text offers (where to go next). */
export interface Link {
  href: string
  label: string
}

/** The main part of a page of text: a refusal, an error, a message. */
export const messageMain = (title: string, text: string, link?: Link): Html =>
  html`<div class="narrow"><h1>${title}</h1><div class="card"><p>${text}</p>${link ? html`<p><a href="${link.href}">${link.label}</a></p>` : ''}</div></div>`

/** The one-time notice of a page (`?notice=`), announced to screen readers. */
export const noticeBox = (text: string | undefined): Html | '' => (text ? html`<p class="notice" role="status">${text}</p>` : '')
