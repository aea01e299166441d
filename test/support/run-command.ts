import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const tmp = join(root, '.tmp')

/**
 * The environment every runtime gets in tests: caches under ./.tmp (never the home directory),
 * and no update checks (the only network here is the npm registry).
 */
export function runtimeEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  mkdirSync(tmp, { recursive: true })
  // Deno colours its output whenever FORCE_COLOR is set, even to 0 (as .ci/run sets it).
  const { FORCE_COLOR: _forced, ...inherited } = process.env
  return {
    ...inherited,
    BUN_INSTALL_CACHE_DIR: join(tmp, 'bun', 'install'),
    BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0',
    DENO_DIR: join(tmp, 'deno'),
    DENO_NO_UPDATE_CHECK: '1',
    DENO_NO_PROMPT: '1',
    XDG_CACHE_HOME: join(tmp, 'cache'),
    NO_COLOR: '1',
    ...extra,
  }
}

/**
 * An npm script's command as [binary, args, env]: `A=1 bin x y` becomes `node_modules/.bin/bin`,
 * `[x, y]` and `{A: '1'}`. Running it without npm in between lets a signal reach the program itself.
 */
export function scriptCommand(name: string): { command: string; args: string[]; env: Record<string, string> } {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  const script = scripts[name]
  if (!script) throw new Error(`package.json has no script ${name}`)
  const words = script.trim().split(/\s+/)
  const env: Record<string, string> = {}
  while (words[0] && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [key, ...value] = words.shift()!.split('=')
    env[key!] = value.join('=')
  }
  const [binary, ...args] = words
  return { command: join(root, 'node_modules', '.bin', binary!), args, env }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: it removes terminal colour codes
const COLOURS = /\u001b\[[0-9;]*m/g
/** Output as text: a runtime that colours it anyway (a terminal setting it inherited) still matches. */
const stripColours = (text: string) => text.replace(COLOURS, '')

export interface Started {
  child: ChildProcess
  /** The first URL the program printed that matches the pattern. */
  url: string
  /** Everything printed so far, stdout and stderr together. */
  output(): string
  /** Sends SIGTERM and resolves with the exit code (null when killed by a signal). */
  stop(): Promise<number | null>
}

/**
 * Starts a program and resolves once it prints a URL matching `pattern` (its first group), or rejects
 * with its output when it exits first or prints nothing that matches within `waitMs` (then it is killed).
 */
export function startProgram(command: string, args: string[], env: NodeJS.ProcessEnv, pattern: RegExp, waitMs = 40_000): Promise<Started> {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${command} ${args.join(' ')} printed no URL within ${waitMs} ms:\n${output}`))
    }, waitMs)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = pattern.exec(stripColours(output))
      if (!match) return
      clearTimeout(timer)
      child.stdout!.off('data', onData)
      child.stderr!.off('data', onData)
      child.stdout!.on('data', (more: Buffer) => (output += more.toString()))
      child.stderr!.on('data', (more: Buffer) => (output += more.toString()))
      resolve({
        child,
        url: match[1]!,
        output: () => output,
        stop: () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
          return exited
        },
      })
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${command} exited (${code}) before printing a URL:\n${output}`))
    })
  })
}
