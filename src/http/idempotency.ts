import type { Clock } from '../clock.js'
import { newId, sha256Hex } from '../crypto.js'
import type { IdempotencyRecord } from '../domain/records.js'
import { AffiliateError } from '../errors.js'
import { UniqueViolationError, type Storage, type StorageTransaction } from '../storage/types.js'
import { errorBody, type Answer } from './respond.js'

export interface IdempotencyOptions {
  /** How long a finished request's answer is kept for replay, in ms. @default 86_400_000 (24 hours) */
  ttlMs?: number
  /**
   * How long a request still running holds its key, in ms. A process that dies mid-request leaves
   * its key held this long; a retry after that runs the request again, which is safe because a
   * request's writes and its stored answer commit in one transaction. @default 60_000
   */
  leaseMs?: number
}

export const IDEMPOTENCY_HEADER = 'idempotency-key'
const DAY = 24 * 60 * 60 * 1000
/** Expired records removed per new record, so the table does not grow with time. */
const SWEEP = 20

type Begin = { kind: 'new'; id: string } | { kind: 'replay'; record: IdempotencyRecord } | { kind: 'running' } | { kind: 'mismatch' }

export interface IdempotentCall {
  keyId: string
  /** The `Idempotency-Key` header as sent. */
  key: string
  /** What makes two requests the same: method, path with query, and body. */
  fingerprint: string
  /** The answer for a successful result. */
  envelope(data: unknown): Answer
  /**
   * Runs the request with a storage whose write transaction also stores the answer, so the
   * request's writes and its stored answer commit together or not at all.
   */
  execute(storage: Storage): Promise<unknown>
}

/** Checks the header: 1 to 255 characters. */
export function checkIdempotencyKey(key: string): void {
  if (key.length < 1 || key.length > 255)
    throw new AffiliateError(400, 'Idempotency-Key must be 1 to 255 characters', { code: 'invalid_idempotency_key' })
}

/** JSON with every object's keys sorted: the same value however a client ordered its keys. */
const sortedJson = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  )

/**
 * What makes two requests the same request: method, path with query, and body. The body counts by
 * value, not by how it was written: a retry that re-serializes the same JSON in another key order
 * (another process, another library) is the same request.
 */
export const fingerprintOf = (method: string, target: string, body: unknown): string => `${method} ${target}\n${sortedJson(body)}`

/**
 * Retries with the same `Idempotency-Key` (per API key) answer the first answer, replayed, and
 * change nothing. Answers are kept in the storage, so a replay works after a restart and from any
 * instance sharing it.
 */
export function createIdempotency(storage: Storage, clock: Clock, options: IdempotencyOptions = {}) {
  const ttlMs = options.ttlMs ?? DAY
  const leaseMs = options.leaseMs ?? 60_000
  const at = (ms: number) => new Date(ms).toISOString()

  async function sweep(tx: StorageTransaction, now: number): Promise<void> {
    for (const old of await tx.find('idempotency', { orderBy: { field: 'createdAt', direction: 'ASC' }, limit: SWEEP })) {
      if (Date.parse(old.expiresAt) <= now) await tx.delete('idempotency', old.id)
    }
  }

  async function begin(scopeKey: string, requestHash: string): Promise<Begin> {
    try {
      return await storage.transaction(async (tx): Promise<Begin> => {
        const now = clock.now()
        const [existing] = await tx.find('idempotency', { where: { scopeKey }, limit: 1 })
        if (existing && Date.parse(existing.expiresAt) > now) {
          if (existing.requestHash !== requestHash) return { kind: 'mismatch' }
          return existing.state === 'running' ? { kind: 'running' } : { kind: 'replay', record: existing }
        }
        if (existing) await tx.delete('idempotency', existing.id)
        await sweep(tx, now)
        const id = newId()
        await tx.insert('idempotency', {
          id,
          scopeKey,
          requestHash,
          state: 'running',
          status: 0,
          body: '',
          expiresAt: at(now + leaseMs),
          createdAt: at(now),
          updatedAt: at(now),
        })
        return { kind: 'new', id }
      })
    } catch (error) {
      // Another instance took the key between our read and our insert: it is running it now.
      if (error instanceof UniqueViolationError) return { kind: 'running' }
      throw error
    }
  }

  const finish = (tx: StorageTransaction, id: string, status: number, body: string) => {
    const now = clock.now()
    return tx.update('idempotency', id, { state: 'done', status, body, expiresAt: at(now + ttlMs), updatedAt: at(now) })
  }

  const replay = (status: number, body: string): Answer => ({ status, body, headers: { 'idempotent-replayed': 'true' } })

  return {
    async run(call: IdempotentCall): Promise<Answer> {
      const scopeKey = sha256Hex(`${call.keyId}\u0000${call.key}`)
      const requestHash = sha256Hex(call.fingerprint)
      const started = await begin(scopeKey, requestHash)
      if (started.kind === 'mismatch') {
        throw new AffiliateError(422, 'This Idempotency-Key was already used with a different request', { code: 'idempotency_key_reused' })
      }
      if (started.kind === 'running') {
        throw new AffiliateError(409, 'A request with this Idempotency-Key is still being processed', { code: 'idempotency_in_progress' })
      }
      if (started.kind === 'replay') return replay(started.record.status, started.record.body)

      // POST operations make one write transaction and answer its value as their data.
      const recording: Storage = {
        transaction: (work, transactionOptions) =>
          transactionOptions?.readOnly
            ? storage.transaction(work, transactionOptions)
            : storage.transaction(async (tx) => {
                const value = await work(tx)
                const { status, body } = call.envelope(value)
                await finish(tx, started.id, status, body)
                return value
              }, transactionOptions),
      }
      try {
        return call.envelope(await call.execute(recording))
      } catch (error) {
        // A refusal the request earned by what it asked (not found, a business rule) is its answer
        // and is kept; a malformed request (400) or a failure of ours frees the key for a retry.
        const body = errorBody(error)
        await storage.transaction(async (tx) => {
          if (body.status === 400 || body.status >= 500) await tx.delete('idempotency', started.id)
          else await finish(tx, started.id, body.status, JSON.stringify(body))
        })
        throw error
      }
    },
  }
}
