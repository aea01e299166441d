import { html, type Html } from './html.js'

/**
 * A column: its name, or its name with `'num'` (figures, right-aligned) or `'unlabelled'` (its
 * cells speak for themselves: no name before them on a phone).
 */
export type Column = string | readonly [string, 'num' | 'unlabelled']

/** A table in a scrolling box; on a phone each row stacks, each cell after its column's name. */
export function table(columns: readonly Column[], rows: readonly (readonly (Html | string)[])[], caption?: string): Html {
  const spec = columns.map((col) => (typeof col === 'string' ? { name: col, kind: undefined } : { name: col[0], kind: col[1] }))
  return html`<div class="table"><table class="stack">${caption ? html`<caption class="muted">${caption}</caption>` : ''}<thead><tr>${spec.map(
    ({ name, kind }) => (kind === 'num' ? html`<th scope="col" class="num">${name}</th>` : html`<th scope="col">${name}</th>`),
  )}</tr></thead><tbody>${rows.map(
    (row) =>
      html`<tr>${row.map((cell, i) => {
        const { name, kind } = spec[i]!
        return html`<td${kind === 'unlabelled' ? '' : html` data-label="${name}"`}${kind === 'num' ? html` class="num"` : ''}>${cell}</td>`
      })}</tr>`,
  )}</tbody></table></div>`
}
