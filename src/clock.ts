/** Where the service reads the time. Inject a fake one in tests to move time without sleeping. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

/** The wall clock. The only place the core reads `Date.now()`. */
export const systemClock: Clock = { now: () => Date.now() }

export const isoAt = (clock: Clock): string => new Date(clock.now()).toISOString()
