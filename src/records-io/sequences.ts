import { EVENT_SEQUENCE } from '../events/outbox.js'
import type { ModelName, Storage, StoredRecord } from '../storage/types.js'

/**
 * The highest number the events' sequence (the one sequence the service takes numbers from) has
 * handed out, as far as the records show: its `sequences` record's value (the memory and sql.js
 * storages keep it there) and the `sequence` of every event (PostgreSQL keeps its sequence in the
 * database, outside the records). Other `sequences` records are records like any other.
 */
export class SequenceHighs {
  readonly highs = new Map<string, number>()

  note(model: ModelName, record: StoredRecord): void {
    if (model === 'sequences' && record.id === EVENT_SEQUENCE) this.raise(EVENT_SEQUENCE, record.value as number)
    else if (model === 'events') this.raise(EVENT_SEQUENCE, record.sequence as number)
  }

  private raise(name: string, value: number): void {
    if (value > (this.highs.get(name) ?? 0)) this.highs.set(name, value)
  }
}

/** Thrown to roll a probe back: carries the number `takeSequence` would have answered. */
class Probe {
  constructor(readonly next: number) {}
}

/** The number the sequence would hand out next, read by taking one in a transaction that is rolled back. */
async function nextOf(storage: Storage, name: string, now: string): Promise<number> {
  try {
    await storage.transaction(async (tx) => {
      throw new Probe(await tx.takeSequence(name, 1, now))
    })
  } catch (error) {
    if (error instanceof Probe) return error.next
    throw error
  }
  throw new Error('unreachable: the probe always rolls back')
}

/**
 * Makes each sequence hand out numbers above the highest the imported records hold, through the
 * contract's `takeSequence`, so that new events never reuse a sequence. A storage that already
 * goes on from there (a `sequences` record imported with its value) is left as it is. The probe
 * is rolled back; PostgreSQL's database sequence still moves by one for it (the contract lets
 * rolled-back numbers be skipped).
 */
export async function continueSequences(storage: Storage, highs: SequenceHighs, now: string): Promise<void> {
  for (const [name, high] of highs.highs) {
    const next = await nextOf(storage, name, now)
    if (next <= high) await storage.transaction((tx) => tx.takeSequence(name, high - next + 1, now))
  }
}
