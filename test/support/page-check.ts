// What the browser tests check on every page they visit: axe-core's accessibility rules, and the
// whole page photographed at a desktop and a phone width (the files are looked at by people).
import AxeBuilder from '@axe-core/playwright'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { expect } from 'vitest'

export const DESKTOP = { width: 1280, height: 900 }
export const PHONE = { width: 390, height: 844 }

/**
 * Fails the test on axe-core's violations on the page as it is, each listed by rule and element;
 * `seriousOnly` counts only the serious and critical ones.
 */
export async function expectAccessible(page: Page, { seriousOnly = false } = {}): Promise<void> {
  const { violations } = await new AxeBuilder({ page })
    // The pages have no frames: axe runs in the page itself (no extra page per check).
    .setLegacyMode(true)
    .options({ resultTypes: ['violations'] })
    .analyze()
  const found = violations
    .filter((v) => !seriousOnly || v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`)
  expect(found, `axe on ${page.url()}`).toEqual([])
}

/** The whole page at both widths, written to `<dir>/<name>-desktop.png` and `-phone.png`; the page is left at desktop width. */
export async function photograph(page: Page, dir: string, name: string): Promise<{ desktop: Buffer; phone: Buffer }> {
  const shots: { desktop: Buffer; phone: Buffer } = { desktop: Buffer.alloc(0), phone: Buffer.alloc(0) }
  for (const [size, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(viewport)
    shots[size] = await page.screenshot({ fullPage: true, path: join(dir, `${name}-${size}.png`) })
    expect(shots[size].byteLength).toBeGreaterThan(1000)
  }
  await page.setViewportSize(DESKTOP)
  return shots
}
