import type { Storage } from '../storage/types.js'
import { affiliateOperations } from './affiliates.js'
import { campaignOperations } from './campaigns.js'
import { commissionOperations } from './commissions.js'
import { linkOperations } from './links.js'
import { payoutExportOperation } from './payout-export.js'
import { payoutOperations } from './payouts.js'
import { referredUserOperations } from './referred-users.js'
import type { Deps } from './shared.js'
import { customerOperations } from './customers.js'
import { conversionOperations } from './conversions.js'
import { integrationOperations } from './integrations.js'
import { promoCodeOperations } from './promo-codes.js'
import { eventOperations } from './events.js'
import { webhookOperations } from './webhooks.js'
import { exportOperations } from './exports.js'
import { reportOperations } from './reports.js'

export type Operations = ReturnType<typeof createOperations>

/**
 * The operations over a storage, made the service's way (its commit hook, clock and webhook
 * policy). The service builds one; every path that runs operations (plain requests, idempotent
 * ones over a storage that also keeps their answer, the typed API) takes them from it.
 */
export type OperationsOn = (storage: Storage) => Operations

/** Every operation, each taking the caller's access first; HTTP and the typed API both call these. */
export const createOperations = (deps: Deps) => ({
  campaigns: campaignOperations(deps),
  affiliates: affiliateOperations(deps),
  links: linkOperations(deps),
  commissions: commissionOperations(deps),
  referredUsers: referredUserOperations(deps),
  payouts: { ...payoutOperations(deps), export: payoutExportOperation(deps) },
  webhooks: webhookOperations(deps),
  events: eventOperations(deps),
  reports: reportOperations(deps),
  exports: exportOperations(deps),
  customers: customerOperations(deps),
  conversions: conversionOperations(deps),
  integrations: integrationOperations(deps),
  promoCodes: promoCodeOperations(deps),
})
