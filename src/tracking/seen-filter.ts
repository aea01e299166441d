// Which visitors may have a click in the dedupe window, kept where the storage has no other writer
// (`Storage.exclusive`): every click this process records sets one bit of 2^24 picked by its
// visitor hash (a Bloom filter with one hash; the hash is an HMAC, so its bits are uniform), in
// generations `windowMs` long. The current generation and the one before hold every click of the
// last window, so a visitor whose bit is clear in both has no click to look up, and the tracker
// answers it without reading the storage. A set bit may be another visitor's (with a million
// visitors in a window, about 6% of new ones): those are read, as every visitor is elsewhere.

const BITS = 2 ** 24
/** The base64url alphabet's value of each character code. */
const SIXBITS = new Uint8Array(128)
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].entries()) SIXBITS[c.charCodeAt(0)] = i

/** The bit of a visitor hash (base64url text): its first 24 bits. */
const bitOf = (visitor: string): number =>
  (SIXBITS[visitor.charCodeAt(0) & 127]! << 18) |
  (SIXBITS[visitor.charCodeAt(1) & 127]! << 12) |
  (SIXBITS[visitor.charCodeAt(2) & 127]! << 6) |
  SIXBITS[visitor.charCodeAt(3) & 127]!

export class SeenFilter {
  /** Two generations of 2 MiB each: slot `g % 2` holds generation `held[g % 2]`. */
  private readonly slots = [new Uint32Array(BITS / 32), new Uint32Array(BITS / 32)]
  private readonly held = [-1, -1]

  constructor(private readonly windowMs: number) {}

  /** The bits of generation `g`, cleared for it when `claim` and its slot holds an older one; else null when it holds another. */
  private slot(g: number, claim: boolean): Uint32Array | null {
    const i = g % 2
    if (this.held[i] === g) return this.slots[i]!
    if (!claim || this.held[i]! > g) return null
    this.slots[i]!.fill(0)
    this.held[i] = g
    return this.slots[i]!
  }

  /** Notes a click of `visitor` at `at` (epoch ms); one older than both generations is not needed. */
  add(visitor: string, at: number): void {
    const bits = this.slot(Math.floor(at / this.windowMs), true)
    if (bits === null) return
    const bit = bitOf(visitor)
    bits[bit >>> 5]! |= 1 << (bit & 31)
  }

  /** False when no click of `visitor` was noted within `windowMs` before `now`. */
  mayHave(visitor: string, now: number): boolean {
    const g = Math.floor(now / this.windowMs)
    // A clock that went back: what was noted may lie ahead of it.
    if (this.held[0]! > g || this.held[1]! > g) return true
    const bit = bitOf(visitor)
    for (const bits of [this.slot(g, false), this.slot(g - 1, false)])
      if (bits !== null && (bits[bit >>> 5]! & (1 << (bit & 31))) !== 0) return true
    return false
  }
}
