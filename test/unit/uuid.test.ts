// One UUID pattern for every check, and ids derived from names (RFC 9562 version 8, SHA-256).
import { describe, expect, it } from 'vitest'
import { timeUuid, timeUuidFloor } from '../../src/tracking/click-ids.js'
import { isUuid, nameUuid, UUID_PATTERN } from '../../src/uuid.js'
import * as main from '../../src/index.js'

const NS = '6ba7b810-9dad-11d1-80b4-00c04fd430c8' // RFC 9562's DNS namespace, a well-known UUID

describe('UUID_PATTERN and isUuid', () => {
  it('accept the 8-4-4-4-12 hex form of any version, either case, and nothing else', () => {
    for (const id of [crypto.randomUUID(), NS, '00000000-0000-0000-0000-000000000000', 'ABCDEF01-2345-8678-9ABC-DEF012345678']) {
      expect(isUuid(id), id).toBe(true)
      expect(UUID_PATTERN.test(id), id).toBe(true)
    }
    for (const bad of [
      '',
      'not-a-uuid',
      `${NS} `,
      ` ${NS}`,
      `${NS}\n`,
      NS.replaceAll('-', ''),
      `{${NS}}`,
      `${NS.slice(0, 35)}g`,
      42,
      null,
      undefined,
      {},
    ]) {
      expect(isUuid(bad), String(bad)).toBe(false)
    }
  })
})

describe('nameUuid', () => {
  it('sets version 8 and the RFC 9562 variant (binary 10)', () => {
    for (const name of ['', 'a', 'workspace:acme', 'é—🙂', 'x'.repeat(10_000)]) {
      const id = nameUuid(NS, name)
      expect(isUuid(id)).toBe(true)
      expect(id).toBe(id.toLowerCase())
      expect(id[14]).toBe('8') // the version nibble
      expect(['8', '9', 'a', 'b']).toContain(id[19]) // variant bits 10xx
    }
  })

  it("gives RFC 9562's own published example: appendix B.2, DNS namespace and www.example.com, SHA-256", () => {
    // RFC 9562 B.2 "Example of a UUIDv8 Value (Name-Based)": 5c146b14-3c52-8afd-938a-375d0df1fbf6.
    expect(nameUuid(NS, 'www.example.com')).toBe('5c146b14-3c52-8afd-938a-375d0df1fbf6')
    expect(nameUuid(NS.toUpperCase(), 'www.example.com')).toBe('5c146b14-3c52-8afd-938a-375d0df1fbf6')
  })

  it('is deterministic, and any namespace spelling (case) gives the same id', () => {
    expect(nameUuid(NS, 'acme')).toBe(nameUuid(NS, 'acme'))
    expect(nameUuid(NS.toUpperCase(), 'acme')).toBe(nameUuid(NS, 'acme'))
  })

  it('gives distinct ids for distinct names and for distinct namespaces', () => {
    const names = Array.from({ length: 2_000 }, (_, i) => `name-${i}`)
    expect(new Set(names.map((name) => nameUuid(NS, name))).size).toBe(names.length)
    expect(nameUuid(NS, 'acme')).not.toBe(nameUuid(crypto.randomUUID(), 'acme'))
    // The namespace is bytes, not text glued to the name: no two (namespace, name) pairs collide by concatenation.
    expect(nameUuid(NS, 'ab')).not.toBe(nameUuid(NS, 'a'))
  })

  it('refuses a namespace that is not a UUID', () => {
    expect(() => nameUuid('affiliate-service', 'acme')).toThrow(TypeError)
  })

  it('is exported from the main entry with the pattern', () => {
    expect(main.nameUuid).toBe(nameUuid)
    expect(main.isUuid).toBe(isUuid)
    expect(main.UUID_PATTERN).toBe(UUID_PATTERN)
  })
})

describe('timeUuid', () => {
  // RFC 9562 A.6 "Example of a UUIDv7 Value": unix_ts_ms 0x017F22E279B0 (2022-02-22T19:22:22Z), ver 7,
  // rand_a 0xCC3, var 0b10, rand_b 0x18C4DC0C0C07398F.
  const VECTOR = '017F22E2-79B0-7CC3-98C4-DC0C0C07398F'
  const MS = 0x017f22e279b0

  it("lays out RFC 9562's published v7 example's fields: its 48-bit time, version 7, variant 10, the rest random", () => {
    expect(new Date(MS).toISOString()).toBe('2022-02-22T19:22:22.000Z')
    const ids = Array.from({ length: 64 }, () => timeUuid(MS))
    for (const id of ids) {
      expect(id).toMatch(/^017f22e2-79b0-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      // The same fixed bits as the vector: time, version nibble, variant bits.
      expect(id.slice(0, 15)).toBe(VECTOR.toLowerCase().slice(0, 15))
    }
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("puts the floor of the vector's instant below the vector and below every id of that instant, and above the instant before", () => {
    const floor = timeUuidFloor(MS)
    expect(floor).toBe('017f22e2-79b0-0000-0000-000000000000')
    expect(floor < VECTOR.toLowerCase()).toBe(true)
    expect(timeUuid(MS - 1) < floor).toBe(true)
    expect(timeUuid(MS) >= floor).toBe(true)
    expect(timeUuidFloor(MS + 1) > VECTOR.toLowerCase()).toBe(true)
  })
})

describe('one pattern', () => {
  it('no other UUID regex and no hand-made name-derived UUID is left in the shipped code, bin or examples', async () => {
    const { readdirSync, readFileSync } = await import('node:fs')
    const { join, relative } = await import('node:path')
    const root = join(import.meta.dirname, '..', '..')
    const files = ['src', 'adapters', 'bin', 'examples'].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => /\.(ts|js|mjs)$/.test(file))
        .map((file) => join(root, dir, file)),
    )
    const offenders = files.flatMap((file) => {
      const text = readFileSync(file, 'utf8')
      const name = relative(root, file)
      if (name === join('src', 'uuid.ts')) return []
      return [
        ...(/\[0-9a-f\]\{8\}/i.test(text) ? [`${name}: a UUID regex`] : []),
        ...(/stableUuid|subtle\.digest/.test(text) ? [`${name}: a hand-made name-derived id`] : []),
      ]
    })
    expect(offenders).toEqual([])
  })
})
