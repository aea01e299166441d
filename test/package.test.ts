// What the published package holds: the licence and the README, and no copy of the sources inside
// source maps (the build ships no maps: its output is not minified, so stack traces read as is).
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')

describe('the package', () => {
  it('has an MIT LICENSE for the contributors, named in package.json', () => {
    const license = readFileSync(join(root, 'LICENSE'), 'utf8')
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 affiliate-service contributors\n/)
    expect(license).toContain('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND')
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string; files: string[] }
    expect(pkg.license).toBe('MIT')
    expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'LICENSE', 'README.md']))
  })

  it('packs LICENSE, README.md and package.json, and no source map', () => {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    ) as [{ files: { path: string }[] }]
    const paths = packed.files.map((file) => file.path)
    expect(paths).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']))
    expect(paths.filter((path) => path.endsWith('.map'))).toEqual([])
  })

  it('builds without source maps (so none can embed the sources)', async () => {
    const { default: config } = (await import('../tsup.config.js')) as { default: { sourcemap?: unknown } }
    expect(config.sourcemap).toBe(false)
  })
})
