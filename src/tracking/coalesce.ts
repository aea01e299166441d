/**
 * Look-ups by key, coalesced: keys asked while a load runs wait and are loaded together by the
 * next one, so a burst of requests costs one storage read per round, not one each; a lone request
 * is loaded at once. A failed load fails the requests it held.
 */
export function coalesced<K, V>(load: (keys: K[]) => Promise<Map<K, V>>): (key: K) => Promise<V | undefined> {
  type Waiter = { resolve: (value: V | undefined) => void; reject: (error: unknown) => void }
  let queued = new Map<K, Waiter[]>()
  let busy = false

  async function run(): Promise<void> {
    busy = true
    while (queued.size > 0) {
      const round = queued
      queued = new Map()
      try {
        const found = await load([...round.keys()])
        for (const [key, waiters] of round) for (const waiter of waiters) waiter.resolve(found.get(key))
      } catch (error) {
        for (const waiters of round.values()) for (const waiter of waiters) waiter.reject(error)
      }
    }
    busy = false
  }

  return (key) =>
    new Promise<V | undefined>((resolve, reject) => {
      const waiters = queued.get(key)
      if (waiters) waiters.push({ resolve, reject })
      else queued.set(key, [{ resolve, reject }])
      if (!busy) void run()
    })
}
