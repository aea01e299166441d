// The loop of an outbox worker (webhook deliveries, notifications): it works one batch at a time
// while batches come back full or a commit nudged it, otherwise waits `pollMs` or the next nudge,
// and purges old records every `purgeEveryMs`. A failed round goes to `onError` and the loop goes
// on. A worker extends it with what a batch and a purge do; this owns when they run, and stopping.

export interface PollingSettings {
  /** A batch this size means more may be waiting: the next one runs at once. */
  readonly batchSize: number
  readonly pollMs: number
  readonly purgeEveryMs: number
  now(): number
  onError(error: unknown): void
}

export abstract class PollingWorker {
  private loop: Promise<void> | undefined
  private wake: (() => void) | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private nudged = false
  private stopping = false
  /** When the last purge began, whoever started it (the loop or a caller of `purge`). */
  protected lastPurge = Number.NEGATIVE_INFINITY

  constructor(protected readonly polling: PollingSettings) {}

  /** Claims and works one batch; answers how many items it handled. */
  protected abstract batch(): Promise<number>
  /** Deletes what is past its retention. */
  abstract purge(): Promise<unknown>

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

  /** Works every item due now, batch after batch; answers how many were handled. */
  async drain(): Promise<number> {
    let total = 0
    for (;;) {
      const handled = await this.batch()
      total += handled
      if (handled < this.polling.batchSize) return total
    }
  }

  private async run(): Promise<void> {
    const { polling } = this
    while (!this.stopping) {
      let full = false
      this.nudged = false
      try {
        if (polling.now() - this.lastPurge >= polling.purgeEveryMs) await this.purge()
        full = (await this.batch()) >= polling.batchSize
      } catch (error) {
        polling.onError(error)
      }
      if (this.stopping) break
      // A commit during the batch may have made items it did not see: look again at once.
      if (full || this.nudged) continue
      await new Promise<void>((resolve) => {
        this.wake = resolve
        this.timer = setTimeout(resolve, polling.pollMs)
      })
      this.wake = undefined
    }
  }
}
