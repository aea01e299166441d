// SHA-256 (FIPS 180-4) in plain TypeScript. Every keyed request hashes its API key; on Node,
// `crypto.subtle.digest` costs about as much as a bare http server spends on a whole request
// (it goes through a job queue), while this costs well under a microsecond for a key and runs the
// same everywhere. It is checked against Web Crypto in test/sha256.test.ts. Only add, xor, shift
// and rotate on the data: no branch or table index depends on the input, the hex digits included.

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
])

// Scratch space, reused: the functions here never await, so no two calls share it at once.
/** The message schedule. */
const W = new Int32Array(64)
/** The running hash. */
const H = new Int32Array(8)
/** The last one or two blocks, where the padding goes. */
const TAIL = new Uint8Array(128)
/** The digest's hex digits as ASCII bytes, turned into a string by a decoder (the cheapest way there). */
const HEX = new Uint8Array(64)
const ascii = new TextDecoder()

const INITIAL = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19])

/** Runs the compression function over the 64-byte block of `bytes` at `offset`, into H. */
function compress(bytes: Uint8Array, offset: number): void {
  for (let i = 0; i < 16; i++) {
    const o = offset + i * 4
    W[i] = (bytes[o]! << 24) | (bytes[o + 1]! << 16) | (bytes[o + 2]! << 8) | bytes[o + 3]!
  }
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15]!
    const w2 = W[i - 2]!
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3)
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10)
    W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0
  }
  let a = H[0]!
  let b = H[1]!
  let c = H[2]!
  let d = H[3]!
  let e = H[4]!
  let f = H[5]!
  let g = H[6]!
  let h = H[7]!
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0
    h = g
    g = f
    f = e
    e = (d + t1) | 0
    d = c
    c = b
    b = a
    a = (t1 + t2) | 0
  }
  H[0] = (H[0]! + a) | 0
  H[1] = (H[1]! + b) | 0
  H[2] = (H[2]! + c) | 0
  H[3] = (H[3]! + d) | 0
  H[4] = (H[4]! + e) | 0
  H[5] = (H[5]! + f) | 0
  H[6] = (H[6]! + g) | 0
  H[7] = (H[7]! + h) | 0
}

/**
 * The SHA-256 digest of `data` as 64 lowercase hex digits.
 *
 * @example
 * sha256HexOf(new TextEncoder().encode('abc')) // 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
 */
export function sha256HexOf(data: Uint8Array): string {
  H.set(INITIAL)
  const length = data.length
  const whole = length & ~63
  for (let offset = 0; offset < whole; offset += 64) compress(data, offset)
  // The rest of the data, the 0x80 marker, zeros, and the bit length in the last 8 bytes.
  const rest = length - whole
  const tail = rest < 56 ? 64 : 128
  TAIL.fill(0)
  TAIL.set(data.subarray(whole), 0)
  TAIL[rest] = 0x80
  const high = Math.floor(length / 0x20000000)
  const low = (length << 3) >>> 0
  TAIL[tail - 8] = high >>> 24
  TAIL[tail - 7] = high >>> 16
  TAIL[tail - 6] = high >>> 8
  TAIL[tail - 5] = high
  TAIL[tail - 4] = low >>> 24
  TAIL[tail - 3] = low >>> 16
  TAIL[tail - 2] = low >>> 8
  TAIL[tail - 1] = low
  compress(TAIL, 0)
  if (tail === 128) compress(TAIL, 64)
  for (let i = 0; i < 8; i++) {
    const word = H[i]!
    for (let j = 0; j < 8; j++) {
      const nibble = (word >>> (28 - j * 4)) & 15
      // '0'..'9' then 'a'..'f' without a branch: 39 more from 10 on (the sign of 9 - nibble).
      HEX[i * 8 + j] = 48 + nibble + (((9 - nibble) >> 31) & 39)
    }
  }
  return ascii.decode(HEX)
}
