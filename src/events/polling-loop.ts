// The loop of an outbox worker (webhook deliveries, notifications): it works one batch at a time
// while batches come back full or a commit nudged it, otherwise waits `pollMs` or the next nudge,
// and purges old records every `purgeEveryMs`. A failed round goes to `onError` and the loop goes
// on. The worker owns what a batch does; this owns when it runs, and stopping.

export interface PollingWork {
  /** Claims and works one batch; answers how many items it handled. */
  batch(): Promise<number>
  /** A batch this size means more may be waiting: the next one runs at once. */
  readonly batchSize: number
  readonly pollMs: number
  readonly purgeEveryMs: number
  /** Deletes what is past its retention. */
  purge(): Promise<unknown>
  now(): number
  onError(error: unknown): void
}

export class PollingLoop {
  private loop: Promise<void> | undefined
  private wake: (() => void) | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private nudged = false
  private stopping = false
  /** When the last purge began, whoever started it (the loop or the worker's own `purge`). */
  lastPurge = Number.NEGATIVE_INFINITY

  constructor(private readonly work: PollingWork) {}

  get running(): boolean {
    return this.loop !== undefined
  }

  /** Starts the loop (idempotent). */
  start(): void {
    if (this.loop) return
    this.stopping = false
    this.loop = this.run()
  }

  /** Stops the loop and waits for the batch under way to be recorded. */
  async stop(): Promise<void> {
    this.stopping = true
    clearTimeout(this.timer)
    this.wake?.()
    await this.loop
    this.loop = undefined
  }

  /** Looks for due items now rather than at the next poll (after a commit that made some). */
  nudge(): void {
    this.nudged = true
    this.wake?.()
  }

  private async run(): Promise<void> {
    const { work } = this
    while (!this.stopping) {
      let full = false
      this.nudged = false
      try {
        if (work.now() - this.lastPurge >= work.purgeEveryMs) await work.purge()
        full = (await work.batch()) >= work.batchSize
      } catch (error) {
        work.onError(error)
      }
      if (this.stopping) break
      // A commit during the batch may have made items it did not see: look again at once.
      if (full || this.nudged) continue
      await new Promise<void>((resolve) => {
        this.wake = resolve
        this.timer = setTimeout(resolve, work.pollMs)
      })
      this.wake = undefined
    }
  }
}
