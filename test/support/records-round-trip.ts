// Export, import, export again, between two kinds of storage: the record lines must come back byte
// for byte, and the service must go on numbering events after the imported ones. Used by
// test/storage/records-io.test.ts (memory, sql.js file) and records-io-postgres.test.ts.
import { join } from 'node:path'
import { expect } from 'vitest'
import { fileJournal } from '../../adapters/node/file-journal.js'
import { exportRecords, importRecords, memoryStorage, sqlJsStorage, type Storage } from '../../src/index.js'
import { apiCampaignInput, setup } from './helpers.js'
import { fillProgram } from './records-program.js'

export type Opened = Storage & { close(): Promise<void> }

/** A kind of storage: makes a fresh, empty one. PostgreSQL keeps the events' sequence in the database, not in a record. */
export interface StorageKind {
  name: string
  make: () => Promise<Opened>
  sequenceInRecords: boolean
}

export const memoryKind: StorageKind = { name: 'memory', make: async () => memoryStorage() as Opened, sequenceInRecords: true }

let files = 0
export const sqlJsFileKind = (dir: string): StorageKind => ({
  name: 'sql.js file',
  make: async () => {
    const storage = sqlJsStorage({ persist: fileJournal(join(dir, `db-${++files}.sqlite`)) })
    await storage.ready()
    return storage
  },
  sequenceInRecords: true,
})

export const NOW = '2026-03-01T12:00:00.000Z'
export const clock = { now: () => Date.parse(NOW) }

/** Every line of an export, in small pages so that paging is exercised. */
export async function exported(storage: Storage): Promise<string[]> {
  const out: string[] = []
  for await (const line of exportRecords(storage, { clock, pageSize: 3 })) out.push(line)
  return out
}

/** Fills a `from` storage with a program, exports it, imports the lines into a `to` storage, and checks both ways. */
export async function roundTrip(from: StorageKind, to: StorageKind): Promise<void> {
  const source = await from.make()
  const target = await to.make()
  try {
    await fillProgram(source)
    const first = await exported(source)
    const result = await importRecords(target, first, { clock, batchSize: 4, pageSize: 5 })
    const second = await exported(target)
    expect(first[0]).toBe(
      JSON.stringify({
        format: 'affiliate-service/records',
        version: 1,
        schemaVersion: JSON.parse(first[0]!).schemaVersion,
        exportedAt: NOW,
      }),
    )
    expect(result.models).toEqual(JSON.parse(first.at(-1)!).models)
    const highest = Math.max(
      ...first.filter((line) => line.startsWith('{"model":"events"')).map((line) => JSON.parse(line).record.sequence as number),
    )
    if (from.sequenceInRecords || !to.sequenceInRecords) {
      expect(second).toEqual(first)
    } else {
      // From PostgreSQL to a storage that keeps the events' counter as a record: the import made
      // that record (going on after the highest event), and only it is new.
      const counter = second.find((line) => line.startsWith('{"model":"sequences","record":{"id":"events",'))!
      expect(JSON.parse(counter).record).toEqual({ id: 'events', value: highest, createdAt: NOW, updatedAt: NOW })
      expect(second.slice(1, -1).filter((line) => line !== counter)).toEqual(first.slice(1, -1))
    }
    // The service goes on where the source stopped: the next event is numbered after every imported one.
    const { api } = setup({ storage: target })
    const campaign = await api.campaigns.create(apiCampaignInput({ campaignName: 'After the move' }))
    const later = await target.transaction((tx) => tx.find('events', { where: { sequence: { gt: highest } } }))
    expect(later.map((event) => [event.type, JSON.parse(event.data).id])).toEqual([['campaign.created', campaign.id]])
  } finally {
    await Promise.all([source.close(), target.close()])
  }
}
