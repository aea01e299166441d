import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { expect, it } from 'vitest'

// A resolve hook that reports every module the program asks for, so the test sees what loads.
const hook = `
export async function resolve(specifier, context, next) {
  if (specifier === 'sql.js' || specifier.includes('file-journal')) process.stdout.write('loaded ' + specifier + '\\n')
  return next(specifier, context)
}`
const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)})`

function run(program: string): string {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', program],
    { encoding: 'utf8', cwd: join(import.meta.dirname, '..', '..') },
  )
  expect(result.status, result.stderr).toBe(0)
  return result.stdout
}

const entry = JSON.stringify(new URL('../../src/index.ts', import.meta.url).href)

it('importing the main entry loads neither sql.js (wasm) nor the file module', () => {
  expect(run(`await import(${entry})`)).not.toContain('loaded')
})

it('sql.js loads on first use, and the file module only for a file', () => {
  const inMemory = run(`const { sqlJsStorage } = await import(${entry}); await sqlJsStorage().ready()`)
  expect(inMemory).toContain('loaded sql.js')
  expect(inMemory).not.toContain('file-journal')
})

// sql.js initialises once per process, so each of these runs in a process of its own.
const dist = JSON.stringify(join(import.meta.dirname, '..', '..', 'node_modules', 'sql.js', 'dist'))

it('finds the wasm through locateFile', () => {
  const out = run(`
    const { sqlJsStorage } = await import(${entry})
    const asked = []
    const storage = sqlJsStorage({ locateFile: (file) => (asked.push(file), ${dist} + '/' + file) })
    console.log(await storage.transaction((tx) => tx.count('campaigns', {})), JSON.stringify(asked))`)
  expect(out).toContain('0 ["sql-wasm.wasm"]')
})

it('takes the wasm as bytes', () => {
  const out = run(`
    const { readFileSync } = await import('node:fs')
    const { sqlJsStorage } = await import(${entry})
    const storage = sqlJsStorage({ wasmBinary: readFileSync(${dist} + '/sql-wasm.wasm'), locateFile: () => '/nowhere' })
    console.log('count', await storage.transaction((tx) => tx.count('campaigns', {})))`)
  expect(out).toContain('count 0')
})

// sql.js aborts the whole process when its wasm cannot be read (an unhandled rejection of its
// own, out of our reach); at least the message names the path that was tried.
it('dies naming the path when the wasm is not where locateFile says', () => {
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `
      const { sqlJsStorage } = await import(${entry})
      await sqlJsStorage({ locateFile: (file) => '/nowhere/' + file }).ready().catch(() => {})`,
    ],
    { encoding: 'utf8' },
  )
  expect(result.status).not.toBe(0)
  expect(result.stderr).toContain('/nowhere/sql-wasm.wasm')
})
