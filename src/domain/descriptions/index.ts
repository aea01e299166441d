import { affiliates } from './affiliates.js'
import { campaigns } from './campaigns.js'
import { commissions } from './commissions.js'
import { customers, saleRefunds, sales } from './customers.js'
import { integrations, providerEvents } from './integrations.js'
import { links } from './links.js'
import { notificationPreferences, notifications } from './notifications.js'
import { payouts } from './payouts.js'
import { promoCodes } from './promo-codes.js'
import { adminSessions, apiKeys, clicks, idempotency, portalTokens, rollups, sequences, settings } from './service.js'
import { events, webhookDeliveries, webhooks } from './webhooks.js'

/**
 * Every model, described once (see ../describe.ts): the record types, the storages' tables, the
 * answers, the request schemas, the OpenAPI parts and the admin's forms derive from these.
 */
export const descriptions = {
  campaigns,
  affiliates,
  links,
  commissions,
  payouts,
  apiKeys,
  idempotency,
  events,
  webhooks,
  webhookDeliveries,
  sequences,
  rollups,
  clicks,
  settings,
  portalTokens,
  adminSessions,
  customers,
  sales,
  saleRefunds,
  integrations,
  providerEvents,
  promoCodes,
  notifications,
  notificationPreferences,
}

export type Descriptions = typeof descriptions
