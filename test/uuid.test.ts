// One UUID pattern for every check, and ids derived from names (RFC 9562 version 8, SHA-256).
import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils'
import { describe, expect, it } from 'vitest'
import { isUuid, nameUuid, UUID_PATTERN } from '../src/uuid.js'
import * as main from '../src/index.js'

const NS = '6ba7b810-9dad-11d1-80b4-00c04fd430c8' // RFC 9562's DNS namespace, a well-known UUID

describe('UUID_PATTERN and isUuid', () => {
  it('accept the 8-4-4-4-12 hex form of any version, either case, and nothing else', () => {
    for (const id of [crypto.randomUUID(), NS, '00000000-0000-0000-0000-000000000000', 'ABCDEF01-2345-8678-9ABC-DEF012345678']) {
      expect(isUuid(id), id).toBe(true)
      expect(UUID_PATTERN.test(id), id).toBe(true)
    }
    for (const bad of ['', 'not-a-uuid', `${NS} `, ` ${NS}`, `${NS}\n`, NS.replaceAll('-', ''), `{${NS}}`, NS.slice(0, 35) + 'g', 42, null, undefined, {}]) {
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

  it('is SHA-256 over the namespace bytes then the UTF-8 name, first 128 bits, version and variant set', () => {
    const digest = sha256(concatBytes(hexToBytes(NS.replaceAll('-', '')), utf8ToBytes('www.example.com'))).slice(0, 16)
    digest[6] = (digest[6]! & 0x0f) | 0x80
    digest[8] = (digest[8]! & 0x3f) | 0x80
    const hex = bytesToHex(digest)
    expect(nameUuid(NS, 'www.example.com')).toBe(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`)
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

describe('one pattern', () => {
  it('no other UUID regex and no hand-made name-derived UUID is left in the shipped code, bin or examples', async () => {
    const { readdirSync, readFileSync } = await import('node:fs')
    const { join, relative } = await import('node:path')
    const root = join(import.meta.dirname, '..')
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
