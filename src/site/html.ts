/** Markup that is already safe: `html` templates make it, and insert it as is. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Text made safe for an element's content or a quoted attribute. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => entities[c]!)

type Part = Html | string | number | null | undefined | false | readonly Part[]

function render(part: Part): string {
  if (part instanceof Html) return part.value
  if (Array.isArray(part)) return part.map(render).join('')
  if (part === null || part === undefined || part === false) return ''
  return escapeHtml(String(part))
}

/**
 * A template whose inserted values are escaped, unless they are `Html` themselves (or lists of
 * parts); `null`, `undefined` and `false` insert nothing. Every page is made with it, so no text
 * from a record or a request reaches the page unescaped.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!
  return new Html(out)
}

/** Paragraphs of a plain text (a campaign's portal texts): blank lines part them, line breaks kept. */
export const paragraphs = (text: string): Html[] =>
  text
    .split(/\n\s*\n/)
    .map((block) => block.trim())
    .filter((block) => block !== '')
    .map((block) => html`<p>${block.split('\n').map((line, i) => (i === 0 ? html`${line}` : html`<br>${line}`))}</p>`)
