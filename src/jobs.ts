// The service's background work, in one list: `service.start()` starts every job, `service.close()`
// closes them in the list's order and resolves once each has written what it holds. A new job (the
// notifications outbox, say) joins the list in service.ts with one entry made by one of these.

import type { SenderChoice } from './events/service-events.js'

/** What `service.start()` takes: the webhook sender (adapters on Node pass `createNodeWebhookSender`), or no delivery. */
export interface StartOptions extends SenderChoice {
  /** `false`: deliver no webhooks from this process (another one does). @default true */
  webhooks?: boolean
}

/** One piece of background work the service owns. */
export interface BackgroundJob {
  /** Its name, as docs/runtimes.md lists it. */
  readonly name: string
  /** Starts it (the service calls it once per `start()`, never twice without a `close()` between). */
  start(options: StartOptions): void
  /** Stops it, and resolves once what it holds is written. */
  close(): Promise<void>
}

/**
 * A job running `work` at start, then `everyMs` after each run ends; at once again while `work`
 * answers true (more to do), so a long backlog is worked off in bounded steps. A failure goes to
 * `onError` and the job runs again at its next time. `close()` cancels the next run and waits for
 * the one under way.
 */
export function periodicJob(name: string, everyMs: number, work: () => Promise<boolean>, onError: (error: unknown) => void): BackgroundJob {
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<void> | null = null
  let stopped = true

  async function run(): Promise<void> {
    try {
      while (!stopped && (await work())) {
        // More to do: again, once what else waits has had its turn.
      }
    } catch (error) {
      onError(error)
    }
  }

  function next(delay: number): void {
    timer = setTimeout(() => {
      timer = undefined
      running = run().finally(() => {
        running = null
        if (!stopped) next(everyMs)
      })
    }, delay)
  }

  return {
    name,
    start() {
      if (!stopped) return
      stopped = false
      next(0)
    },
    async close() {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      await running
    },
  }
}

/**
 * Starts and closes `jobs` as one: `start` is idempotent (a second call while started does
 * nothing), `close` closes each job in order, even when one fails (the first failure is thrown
 * once all are closed), and the jobs may be started again after.
 */
export function jobRunner(jobs: readonly BackgroundJob[]) {
  let started = false
  let closing: Promise<void> | null = null
  return {
    get started(): boolean {
      return started
    },
    start(options: StartOptions = {}): void {
      if (started) return
      started = true
      for (const job of jobs) job.start(options)
    },
    close(): Promise<void> {
      return (closing ??= (async () => {
        started = false
        const failures: unknown[] = []
        for (const job of jobs) await job.close().catch((error: unknown) => failures.push(error))
        if (failures.length) throw failures[0]
      })().finally(() => (closing = null)))
    },
  }
}
