// `export default service`: Bun (`bun run`) and Deno (`deno serve`) serve an object with a `fetch` as it is.
import { createAffiliateService, memoryKeyStore, memoryStorage } from 'affiliate-service'

const service = createAffiliateService({
  storage: memoryStorage(),
  keyStore: memoryKeyStore([
    { key: process.env.AFFILIATE_API_KEY!, userId: crypto.randomUUID(), workspaceIds: [process.env.AFFILIATE_WORKSPACE_ID!] },
  ]),
})

export default service
