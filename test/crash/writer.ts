// The child of test/crash/sqljs-crash.test.ts: writes through service.api into a file database as fast
// as it can from `writers` concurrent loops (default 4), printing `ack <id>` once each write has
// been acknowledged, until it is killed.
// Every create makes its campaign the workspace default, which clears the previous default in
// the same transaction: a torn transaction would leave zero or two defaults behind.
import { writeSync } from 'node:fs'
import { createAffiliateService, memoryKeyStore, sqlJsStorage } from '../../src/index.js'
import { fileJournal } from '../../adapters/node/file-journal.js'

const [file, workspaceId, writers = '4'] = process.argv.slice(2) as [string, string, string?]
// Folds every few dozen writes, so kills also land while a snapshot is written and renamed.
const storage = sqlJsStorage({ persist: fileJournal(file), checkpointBytes: 32 * 1024 })
await storage.ready()
const service = createAffiliateService({ storage, keyStore: memoryKeyStore([]) })
writeSync(1, 'ready\n')

let n = 0
async function writer(): Promise<never> {
  for (;;) {
    const campaign = await service.api.campaigns.create({
      campaignName: `crash ${n++}`,
      workspaceId,
      commissionType: 'percentage',
      amount: 10,
      url: 'https://shop.example.com/',
      isDefault: true,
    })
    writeSync(1, `ack ${campaign.id}\n`)
  }
}
// Several at once: commits share fsyncs, and a kill can cut a group commit in half.
await Promise.all(Array.from({ length: Number(writers) }, writer))
