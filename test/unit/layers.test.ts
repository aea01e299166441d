import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The layers of src/ and adapters/: no file imports itself back through others, no folder does,
// and the core imports nothing from Node nor asks which runtime it is on (what is faster on one
// runtime comes from its adapter: `Runtime`, src/runtime.ts).

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : []
  })
const sources = [...files(join(root, 'src')), ...files(join(root, 'adapters'))]
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/g

function importsOf(file: string): string[] {
  const out: string[] = []
  for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) out.push(match[1] ?? match[2]!)
  return out
}
const local = (file: string, spec: string) => (spec.startsWith('.') ? resolve(dirname(file), spec).replace(/\.js$/, '.ts') : undefined)

function cycle(graph: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node]
    state.set(node, 'open')
    path.push(node)
    for (const next of graph.get(node) ?? []) {
      const found = visit(next)
      if (found) return found
    }
    path.pop()
    state.set(node, 'done')
    return undefined
  }
  for (const node of graph.keys()) {
    const found = visit(node)
    if (found) return found
  }
  return undefined
}

/** The code of a source, without its comments (a comment may name Bun or Deno). */
const code = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[\s;,(){}])\/\/.*$/gm, '$1')

/** Ways to ask which runtime this is, or to reach Node without an import. */
const RUNTIME_CHECKS: [string, RegExp][] = [
  ['typeof Bun/Deno/process/Buffer/navigator/EdgeRuntime', /\btypeof\s+(Bun|Deno|process|Buffer|navigator|EdgeRuntime)\b/],
  ['Bun.* or Deno.*', /\b(Bun|Deno)\s*\??\.\s*\w/],
  ['process (versions, env, getBuiltinModule...)', /(^|[^.\w])process\s*\??\.\s*\w/m],
  ['getBuiltinModule', /getBuiltinModule/],
  ['globalThis.process, .Bun, .Deno, .Buffer, .navigator', /globalThis\s*\??\.\s*(process|Bun|Deno|Buffer|navigator)\b/],
  ['a cast of globalThis (how a runtime global is reached untyped)', /\(\s*globalThis\s+as\b/],
  ['Buffer', /(^|[^.\w'"`])Buffer\s*[.(]/m],
  ['navigator.userAgent', /navigator\s*\??\.\s*userAgent/],
  ['require()', /(^|[^.\w])require\s*\(/m],
]
const runtimeChecksIn = (text: string): string[] => RUNTIME_CHECKS.filter(([, pattern]) => pattern.test(code(text))).map(([name]) => name)

/**
 * Hidden channels between layers: a WeakMap (or WeakSet, WeakRef) keyed by an object another
 * module hands around carries data no signature shows (events riding a transaction, a status
 * riding an answer, trackers finding each other through a storage). Data goes in arguments and
 * answers instead (`EventTransaction`, `Answered`, the service's own click writer).
 */
const HIDDEN_STATE = /\b(WeakMap|WeakSet|WeakRef)\b/
const hiddenStateIn = (text: string): boolean => HIDDEN_STATE.test(code(text))

describe('layers', () => {
  const fileGraph = new Map<string, Set<string>>()
  const folderGraph = new Map<string, Set<string>>()
  for (const file of sources) {
    const from = relative(root, file)
    for (const spec of importsOf(file)) {
      const target = local(file, spec)
      if (!target) continue
      const to = relative(root, target)
      fileGraph.set(from, (fileGraph.get(from) ?? new Set()).add(to))
      const [a, b] = [dirname(from), dirname(to)]
      if (a !== b && !a.startsWith(`${b}/`) && !b.startsWith(`${a}/`)) folderGraph.set(a, (folderGraph.get(a) ?? new Set()).add(b))
    }
  }

  it('has no file cycle (type-only imports count)', () => {
    expect(cycle(fileGraph)).toBeUndefined()
  })

  it('has no folder cycle', () => {
    expect(cycle(folderGraph)).toBeUndefined()
  })

  it('keeps the site layer below the portal and the admin, and the two apart', () => {
    // src/site is what both sites share: it imports neither; neither imports the other.
    const rules: [string, string[]][] = [
      ['src/site', ['src/admin', 'src/portal']],
      ['src/admin', ['src/portal']],
      ['src/portal', ['src/admin']],
    ]
    const offenders = [...fileGraph].flatMap(([from, targets]) =>
      rules.flatMap(([folder, banned]) =>
        from.startsWith(`${folder}/`)
          ? [...targets].filter((to) => banned.some((b) => to.startsWith(`${b}/`))).map((to) => `${from} -> ${to}`)
          : [],
      ),
    )
    expect(offenders).toEqual([])
    expect(fileGraph.get('src/admin/index.ts')).toContain('src/site/site.ts')
    expect(fileGraph.get('src/portal/index.ts')).toContain('src/site/site.ts')
  })

  it('keeps node:* out of src/', () => {
    const offenders = sources.filter((f) => f.includes('/src/') && importsOf(f).some((spec) => spec.startsWith('node:')))
    expect(offenders.map((f) => relative(root, f))).toEqual([])
  })

  it('keeps runtime checks out of src/: no typeof Bun, Deno, process.versions, getBuiltinModule, globalThis.process...', () => {
    const offenders = sources
      .filter((f) => f.includes('/src/'))
      .flatMap((f) => runtimeChecksIn(readFileSync(f, 'utf8')).map((check) => `${relative(root, f)}: ${check}`))
    expect(offenders).toEqual([])
  })

  it('finds each runtime check when there is one, and not in comments or prose', () => {
    const found = [
      'const g = globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }',
      'const onNode = typeof process !== "undefined"',
      "if (typeof Bun !== 'undefined') serve()",
      'const deno = Deno.version',
      'const node = process.versions.node',
      'const here = globalThis.process?.versions',
      'const bytes = Buffer.from(text)',
      "const worker = navigator.userAgent === 'Cloudflare-Workers'",
      "const crypto = require('node:crypto')",
    ].map(runtimeChecksIn)
    for (const checks of found) expect(checks.length).toBeGreaterThan(0)
    expect(
      runtimeChecksIn('// under Bun, Deno and workers; typeof Bun\n/** process.versions */\nnavigator.clipboard.writeText(text)'),
    ).toEqual([])
  })

  it('keeps hidden channels out of src/: no WeakMap, WeakSet or WeakRef carrying data between modules', () => {
    const offenders = sources.filter((f) => f.includes('/src/') && hiddenStateIn(readFileSync(f, 'utf8'))).map((f) => relative(root, f))
    expect(offenders).toEqual([])
    // The three sites the review found now pass their data explicitly.
    const text = (path: string) => code(readFileSync(join(root, path), 'utf8'))
    expect(text('src/events/outbox.ts')).toMatch(/class EventTransaction implements StorageTransaction/)
    expect(text('src/api/shared.ts')).toMatch(/class Answered<T>/)
    expect(text('src/tracking/tracker.ts')).not.toMatch(/writersOn/)
  })

  it('finds a hidden channel when there is one, and not in comments', () => {
    expect(hiddenStateIn('const written = new WeakMap<StorageTransaction, EventRecord[]>()')).toBe(true)
    expect(hiddenStateIn('const chosen: WeakSet<object> = new WeakSet()')).toBe(true)
    expect(
      hiddenStateIn('// events once rode a WeakMap keyed by the transaction\n/** no WeakMap here */\nconst events: EventRecord[] = []'),
    ).toBe(false)
  })

  it('can find a cycle when there is one', () => {
    expect(
      cycle(
        new Map([
          ['a', new Set(['b'])],
          ['b', new Set(['a'])],
        ]),
      ),
    ).toEqual(['a', 'b', 'a'])
  })
})
