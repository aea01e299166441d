// The child of test/crash/notify-crash.test.ts: opens the file database with notifications on and
// their job running, whose `send` never completes (the mailer it waits on is gone), then approves
// applicants as fast as it can, printing `ack <email>` once each approval is acknowledged, until
// killed: every notification it made is committed and none is sent.
import { writeSync } from 'node:fs'
import { createAffiliateService, memoryKeyStore, sqlJsStorage } from '../../src/index.js'
import { fileJournal } from '../../adapters/node.js'

const [file, campaignId] = process.argv.slice(2) as [string, string]
const storage = sqlJsStorage({ persist: fileJournal(file), checkpointBytes: 32 * 1024 })
await storage.ready()
const service = createAffiliateService({
  storage,
  keyStore: memoryKeyStore([]),
  notify: { send: () => new Promise<void>(() => undefined), owners: ['owner@example.com'], pollMs: 5 },
})
service.notifications!.start()
writeSync(1, 'ready\n')

let n = 0
async function writer(): Promise<never> {
  for (;;) {
    const email = `applicant-${process.pid}-${n++}@example.com`
    const applicant = await service.api.affiliates.create({ email, campaignId })
    await service.api.affiliates.update(applicant.id, { isActive: true })
    writeSync(1, `ack ${email}\n`)
  }
}
await Promise.all([writer(), writer()])
