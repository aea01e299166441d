// The child of test/crash/events-crash.test.ts: opens the file database, delivers webhooks in the
// background (to the receiver of the parent, which answers slowly) and writes campaigns from two
// loops as fast as it can, printing `ack <id>` once each write has been acknowledged, until killed.
import { writeSync } from 'node:fs'
import { createAffiliateService, memoryKeyStore, sqlJsStorage } from '../../src/index.js'
import { createNodeWebhookSender, fileJournal } from '../../adapters/node.js'

const [file, workspaceId] = process.argv.slice(2) as [string, string]
const storage = sqlJsStorage({ persist: fileJournal(file), checkpointBytes: 32 * 1024 })
await storage.ready()
const service = createAffiliateService({
  storage,
  keyStore: memoryKeyStore([]),
  webhooks: { allowHttp: true, allowPrivateAddresses: true, pollMs: 20 },
})
service.events.start({ sender: createNodeWebhookSender })
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
    })
    writeSync(1, `ack ${campaign.id}\n`)
  }
}
await Promise.all([writer(), writer()])
