import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The layers of src/ and adapters/: no file imports itself back through others, no folder does,
// and the core imports nothing from Node.

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
      rules.flatMap(([folder, banned]) => (from.startsWith(`${folder}/`) ? [...targets].filter((to) => banned.some((b) => to.startsWith(`${b}/`))).map((to) => `${from} -> ${to}`) : [])),
    )
    expect(offenders).toEqual([])
    expect(fileGraph.get('src/admin/index.ts')).toContain('src/site/site.ts')
    expect(fileGraph.get('src/portal/index.ts')).toContain('src/site/site.ts')
  })

  it('keeps node:* out of src/', () => {
    const offenders = sources.filter((f) => f.includes('/src/') && importsOf(f).some((spec) => spec.startsWith('node:')))
    expect(offenders.map((f) => relative(root, f))).toEqual([])
  })

  it('can find a cycle when there is one', () => {
    expect(cycle(new Map([['a', new Set(['b'])], ['b', new Set(['a'])]]))).toEqual(['a', 'b', 'a'])
  })
})
