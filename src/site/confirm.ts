import { csrfField } from './forms.js'
import { html, type Html } from './html.js'

// Actions that delete or move money are confirmed: with JavaScript in a dialog (the site's script
// reads `data-confirm`), without it on a page the action answers, whose form sends the same fields
// again with `confirmed=yes`.

/** Hidden fields, a repeated name once per value. */
const hidden = (fields: Readonly<Record<string, string | readonly string[]>>): Html[] =>
  Object.entries(fields).flatMap(([name, value]) =>
    (typeof value === 'string' ? [value] : value).map((one) => html`<input type="hidden" name="${name}" value="${one}">`),
  )

/** The form of a confirmation page: the action's fields again with `confirmed=yes`, its button, and a way back. */
export const confirmForm = (
  csrf: string,
  action: string,
  fields: Readonly<Record<string, string | readonly string[]>>,
  button: string,
  back: string,
): Html =>
  html`<form method="post" action="${action}">${csrfField(csrf)}${hidden(fields)}<input type="hidden" name="confirmed" value="yes">
<div class="actions"><button class="danger" type="submit">${button}</button><a href="${back}">Cancel</a></div></form>`

/** A small form of hidden fields and one button (an action on a record: quiet, `primary` or `danger`); `confirm` is the sentence it is confirmed with. */
export function actionForm(
  csrf: string,
  action: string,
  fields: Readonly<Record<string, string>>,
  button: string,
  options: { confirm?: string; danger?: boolean; primary?: boolean; label?: string } = {},
): Html {
  return html`<form class="inline" method="post" action="${action}"${options.confirm ? html` data-confirm="${options.confirm}"` : ''}>${csrfField(csrf)}${hidden(fields)}<button type="submit" class="${
    options.danger ? 'danger' : options.primary ? 'primary' : 'quiet'
  }"${options.label ? html` aria-label="${options.label}"` : ''}>${button}</button></form>`
}
