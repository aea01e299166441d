// A benchmark's server in a process of its own (so its CPU is measured apart from the load
// generator's): the parent forks the bench file with `--serve <variant>`; the child starts that
// variant, reports where it listens, and answers each request for a reading with its request
// count and CPU time so far.
import { fork, type ChildProcess } from 'node:child_process'
import type { Server } from 'node:http'
import type { Reading } from './stats.js'

/** Child side: answers readings when asked; call the answer with each server whose requests count. */
export function answerReadings(): (server: Server) => void {
  let requests = 0
  process.on('message', () => {
    const { user, system } = process.cpuUsage()
    process.send!({ cpu: user + system, requests, at: performance.now() } satisfies Reading)
  })
  return (server) => void server.on('request', () => requests++)
}

/** A running server process: where it listens, what else it said when it started, and its readings. */
export type ServerProcess<Extra> = { child: ChildProcess; url: string; read(): Promise<Reading> } & Extra

/** Parent side: forks `file` as the server of `variant` and waits for its first message (`{ url, ...extra }`). */
export function startServer<Extra extends object = object>(file: string, variant: string): Promise<ServerProcess<Extra>> {
  const child = fork(file, ['--serve', variant], { execArgv: ['--import', 'tsx'] })
  // Readings come back in the order they were asked for.
  const waiting: ((reading: Reading) => void)[] = []
  child.on('message', (message: Reading | { url: string }) => {
    if ('cpu' in message) waiting.shift()?.(message)
  })
  const read = () =>
    new Promise<Reading>((resolve) => {
      waiting.push(resolve)
      child.send('read')
    })
  return new Promise((resolve, reject) => {
    child.once('message', (message: { url: string } & Extra) => resolve({ ...message, child, read }))
    child.once('exit', (code) => reject(new Error(`${variant} server exited with ${code}`)))
  })
}
