import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { honoClickPeer } from '../../bench/peers/hono-clicks.js'
import { BROWSER } from '../support/tracking-support.js'

// The click peer of `npm run bench -- clicks` must do the redirect's work, or the comparison
// would measure less: 302 to the url with a clickId, the same clickId for a repeat of a visitor,
// a new one for another visitor, 404 for an unknown code.

const dir = mkdtempSync(join(tmpdir(), 'bench-click-peer-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it('answers 302 with a clickId, dedupes a visitor, and 404 for an unknown code', async () => {
  const server = honoClickPeer(join(dir, 'peer.sqlite'), { code: 'BENCH-1', url: 'https://shop.example.com/?a=1' })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  try {
    const go = async (code: string, agent: string) =>
      fetch(`${origin}/api/v1/r/${code}`, { redirect: 'manual', headers: { 'user-agent': agent } })
    const clickIdOf = async (agent: string) => {
      const response = await go('BENCH-1', agent)
      expect(response.status).toBe(302)
      const location = new URL(response.headers.get('location')!)
      expect(location.searchParams.get('a')).toBe('1')
      return location.searchParams.get('clickId')
    }
    const first = await clickIdOf(BROWSER)
    expect(first).toMatch(/^[0-9a-f-]{36}$/)
    expect(await clickIdOf(BROWSER)).toBe(first)
    expect(await clickIdOf(`${BROWSER} other`)).not.toBe(first)
    expect((await go('NOPE-1', BROWSER)).status).toBe(404)
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
})
