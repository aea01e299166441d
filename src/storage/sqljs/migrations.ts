// The schema, as a list of versions. Each migration is frozen SQL: once released it never changes,
// so a file written by any older version upgrades in place by running the ones after its
// `PRAGMA user_version`. Tables are STRICT so SQLite refuses a value of the wrong type instead of
// converting it; booleans are 0/1 and string arrays JSON text (see columns.ts).

import { rollupBackfillSql } from '../../reports/rollup-backfill.js'

export interface Migration {
  version: number
  sql: string
}

/**
 * SQL that keeps `_counts` (rows per value of an indexed field, and per table under field '') in
 * step through triggers, so that counting a list page is a look-up rather than a walk of the
 * index. Triggers also fire when the journal replays writes, so the counts can never drift.
 * Only ever called with the frozen lists written in the migrations below.
 */
function countTriggers(table: string, fields: readonly string[]): string {
  const up = (field: string, value: string) =>
    `INSERT INTO _counts (model, field, value, n) VALUES ('${table}', '${field}', ${value}, 1) ON CONFLICT (model, field, value) DO UPDATE SET n = n + 1;`
  const down = (field: string, value: string) =>
    `UPDATE _counts SET n = n - 1 WHERE model = '${table}' AND field = '${field}' AND value = ${value};`
  const fill = [
    `INSERT INTO _counts (model, field, value, n) SELECT '${table}', '', '', count(*) FROM ${table};`,
    ...fields.map(
      (f) => `INSERT INTO _counts (model, field, value, n) SELECT '${table}', '${f}', ${f}, count(*) FROM ${table} GROUP BY ${f};`,
    ),
  ]
  return [
    ...fill,
    `CREATE TRIGGER _counts_${table}_insert AFTER INSERT ON ${table} BEGIN ${[up('', "''"), ...fields.map((f) => up(f, `NEW.${f}`))].join(' ')} END;`,
    `CREATE TRIGGER _counts_${table}_delete AFTER DELETE ON ${table} BEGIN ${[down('', "''"), ...fields.map((f) => down(f, `OLD.${f}`))].join(' ')} END;`,
    ...fields.map(
      (f) =>
        `CREATE TRIGGER _counts_${table}_${f} AFTER UPDATE OF ${f} ON ${table} WHEN OLD.${f} IS NOT NEW.${f} BEGIN ${down(f, `OLD.${f}`)} ${up(f, `NEW.${f}`)} END;`,
    ),
  ].join('\n')
}

/**
 * The fields whose rows `_counts` keeps (see `countTriggers`), as migration 4 made them (payouts:
 * migration 6, portalTokens: migration 9): frozen, and the storage counts through `_counts` only for
 * these. A table listed here must have had `countTriggers` run on it (its whole-table row included).
 */
export const COUNTED = {
  campaigns: ['workspaceId'],
  affiliates: ['workspaceId', 'campaignId'],
  links: ['workspaceId', 'affiliateId', 'referralCode'],
  commissions: ['workspaceId', 'affiliateId', 'campaignId', 'referredUserKey'],
  payouts: ['workspaceId', 'affiliateId', 'campaignId'],
  apiKeys: ['lookup'],
  idempotency: ['scopeKey'],
  // Migration 7 made rollups without count triggers: they are counted by SQL. (An entry here with
  // no fields made `count('rollups', {})` read a `_counts` row no trigger keeps, and answer 0.)
  portalTokens: ['email'],
} as const

/**
 * Field pairs whose value pairs `_counts` keeps, as migration 5 made them (field `a,b`, value
 * `a || char(31) || b`): frozen, like COUNTED.
 */
export const COUNTED_PAIRS = {
  commissions: [['workspaceId', 'status']],
} as const

/** Between the two values of a counted pair in `_counts.value`. */
export const PAIR_SEPARATOR = '\u001f'

/** Like `countTriggers`, for one pair of fields; only ever called with the frozen pairs above. */
function pairCountTriggers(table: string, a: string, b: string): string {
  const field = `${a},${b}`
  const value = (row: string) => `${row}.${a} || char(31) || ${row}.${b}`
  const up = (row: string) =>
    `INSERT INTO _counts (model, field, value, n) VALUES ('${table}', '${field}', ${value(row)}, 1) ON CONFLICT (model, field, value) DO UPDATE SET n = n + 1;`
  const down = (row: string) => `UPDATE _counts SET n = n - 1 WHERE model = '${table}' AND field = '${field}' AND value = ${value(row)};`
  return [
    `INSERT INTO _counts (model, field, value, n) SELECT '${table}', '${field}', ${a} || char(31) || ${b}, count(*) FROM ${table} GROUP BY ${a}, ${b};`,
    `CREATE TRIGGER _counts_${table}_${a}_${b}_insert AFTER INSERT ON ${table} BEGIN ${up('NEW')} END;`,
    `CREATE TRIGGER _counts_${table}_${a}_${b}_delete AFTER DELETE ON ${table} BEGIN ${down('OLD')} END;`,
    `CREATE TRIGGER _counts_${table}_${a}_${b}_update AFTER UPDATE OF ${a}, ${b} ON ${table} WHEN OLD.${a} IS NOT NEW.${a} OR OLD.${b} IS NOT NEW.${b} BEGIN ${down('OLD')} ${up('NEW')} END;`,
  ].join('\n')
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE affiliate_meta (key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) STRICT;
INSERT INTO affiliate_meta (key, value) VALUES ('seq', 0);

CREATE TABLE campaigns (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  campaignName TEXT NOT NULL,
  commissionType TEXT NOT NULL,
  amountMinor INTEGER NOT NULL,
  minimumPayoutMinor INTEGER NOT NULL,
  payoutId TEXT NOT NULL,
  url TEXT NOT NULL,
  requiresApprovalToJoin INTEGER NOT NULL,
  collectAdditionalInfo INTEGER NOT NULL,
  hideCustomerEmail INTEGER NOT NULL,
  payoutTerm INTEGER NOT NULL,
  affiliatePortalWelcomeMessage TEXT NOT NULL,
  affiliateDashboardText TEXT NOT NULL,
  stripeCouponId TEXT NOT NULL,
  allowedUrlParameters TEXT NOT NULL,
  isDefault INTEGER NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX campaigns_created ON campaigns (createdAt, id);
CREATE INDEX campaigns_workspaceId ON campaigns (workspaceId, createdAt, id);

CREATE TABLE affiliates (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  campaignId TEXT NOT NULL,
  email TEXT NOT NULL,
  emailKey TEXT NOT NULL,
  firstName TEXT NOT NULL,
  lastName TEXT NOT NULL,
  notes TEXT NOT NULL,
  payoutEmail TEXT NOT NULL,
  payoutMethod TEXT,
  details TEXT,
  isActive INTEGER NOT NULL,
  isBanned INTEGER NOT NULL,
  totalOpens INTEGER NOT NULL,
  totalClicks INTEGER NOT NULL,
  totalSignups INTEGER NOT NULL,
  totalEarningsMinor INTEGER NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX affiliates_created ON affiliates (createdAt, id);
CREATE INDEX affiliates_workspaceId ON affiliates (workspaceId, createdAt, id);
CREATE INDEX affiliates_campaignId ON affiliates (campaignId, createdAt, id);
CREATE UNIQUE INDEX affiliates_campaign_email ON affiliates (campaignId, emailKey);

CREATE TABLE links (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  campaignId TEXT NOT NULL,
  affiliateId TEXT NOT NULL,
  userId TEXT,
  referralCode TEXT NOT NULL,
  urlParameter TEXT NOT NULL,
  url TEXT NOT NULL,
  totalOpens INTEGER NOT NULL,
  totalClicks INTEGER NOT NULL,
  totalSignups INTEGER NOT NULL,
  totalEarningsMinor INTEGER NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX links_created ON links (createdAt, id);
CREATE INDEX links_workspaceId ON links (workspaceId, createdAt, id);
CREATE INDEX links_affiliateId ON links (affiliateId, createdAt, id);
CREATE UNIQUE INDEX links_referral_code ON links (referralCode);

CREATE TABLE commissions (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  campaignId TEXT NOT NULL,
  affiliateId TEXT NOT NULL,
  referredUser TEXT NOT NULL,
  referredUserKey TEXT NOT NULL,
  amountMinor INTEGER NOT NULL,
  adminEarnedMinor INTEGER NOT NULL,
  status TEXT NOT NULL,
  commissionDate TEXT NOT NULL,
  remarks TEXT,
  payoutDate TEXT,
  name TEXT,
  isSelfReferral INTEGER NOT NULL,
  isWalletPayment INTEGER NOT NULL,
  chargeId TEXT,
  invoiceId TEXT,
  stripeSubscriptionId TEXT,
  linkId TEXT,
  referralCode TEXT,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX commissions_created ON commissions (createdAt, id);
CREATE INDEX commissions_workspaceId ON commissions (workspaceId, createdAt, id);
CREATE INDEX commissions_affiliateId ON commissions (affiliateId, createdAt, id);
CREATE INDEX commissions_campaignId ON commissions (campaignId, createdAt, id);
CREATE INDEX commissions_referredUserKey ON commissions (referredUserKey, createdAt, id);
CREATE UNIQUE INDEX commissions_workspace_invoice ON commissions (workspaceId, invoiceId);
CREATE UNIQUE INDEX commissions_workspace_charge ON commissions (workspaceId, chargeId);
`,
  },
  {
    version: 2,
    sql: `
CREATE TABLE apiKeys (
  id TEXT PRIMARY KEY NOT NULL,
  hash TEXT NOT NULL,
  lookup TEXT NOT NULL,
  prefix TEXT NOT NULL,
  userId TEXT NOT NULL,
  workspaceIds TEXT NOT NULL,
  label TEXT NOT NULL,
  revokedAt TEXT,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX apiKeys_created ON apiKeys (createdAt, id);
CREATE INDEX apiKeys_lookup ON apiKeys (lookup, createdAt, id);
CREATE UNIQUE INDEX api_keys_hash ON apiKeys (hash);
`,
  },
  {
    version: 3,
    sql: `
CREATE TABLE idempotency (
  id TEXT PRIMARY KEY NOT NULL,
  scopeKey TEXT NOT NULL,
  requestHash TEXT NOT NULL,
  state TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT NOT NULL,
  expiresAt TEXT NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX idempotency_created ON idempotency (createdAt, id);
CREATE UNIQUE INDEX idempotency_scope ON idempotency (scopeKey);
`,
  },
  {
    version: 4,
    sql: [
      'CREATE TABLE _counts (model TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (model, field, value)) STRICT, WITHOUT ROWID;',
      countTriggers('campaigns', COUNTED.campaigns),
      countTriggers('affiliates', COUNTED.affiliates),
      countTriggers('links', COUNTED.links),
      countTriggers('commissions', COUNTED.commissions),
      countTriggers('apiKeys', COUNTED.apiKeys),
      countTriggers('idempotency', COUNTED.idempotency),
    ].join('\n'),
  },
  {
    version: 5,
    // Commissions listed by status: one index range per (workspace, status), in list order, and
    // the list's total kept in `_counts` like the single-field ones.
    sql: [
      'CREATE INDEX commissions_workspaceId_status ON commissions (workspaceId, status, createdAt, id);',
      pairCountTriggers('commissions', 'workspaceId', 'status'),
    ].join('\n'),
  },
  {
    version: 6,
    // Payouts and clawbacks. Existing commissions become sales, due `payoutTerm` days after their
    // commissionDate (strftime's %f keeps the milliseconds: the same text `dueAt()` writes).
    sql: [
      `ALTER TABLE campaigns ADD COLUMN currency TEXT NOT NULL DEFAULT 'USD';
ALTER TABLE campaigns ADD COLUMN attributionWindowDays INTEGER NOT NULL DEFAULT 30;
ALTER TABLE commissions ADD COLUMN kind TEXT NOT NULL DEFAULT 'sale';
ALTER TABLE commissions ADD COLUMN dueAt TEXT NOT NULL DEFAULT '';
ALTER TABLE commissions ADD COLUMN payoutId TEXT;
ALTER TABLE commissions ADD COLUMN refundedMinor INTEGER NOT NULL DEFAULT 0;
ALTER TABLE commissions ADD COLUMN reversesCommissionId TEXT;
UPDATE commissions SET dueAt = strftime('%Y-%m-%dT%H:%M:%fZ', commissionDate,
  '+' || coalesce((SELECT payoutTerm FROM campaigns WHERE campaigns.id = commissions.campaignId), 0) || ' days');
CREATE INDEX commissions_payoutId ON commissions (payoutId, createdAt, id);
CREATE TABLE payouts (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  campaignId TEXT NOT NULL,
  affiliateId TEXT NOT NULL,
  currency TEXT NOT NULL,
  amountMinor INTEGER NOT NULL,
  commissionCount INTEGER NOT NULL,
  status TEXT NOT NULL,
  payoutMethod TEXT NOT NULL,
  payoutEmail TEXT NOT NULL,
  periodEnd TEXT NOT NULL,
  externalReference TEXT,
  failureReason TEXT,
  paidAt TEXT,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX payouts_created ON payouts (createdAt, id);
CREATE INDEX payouts_workspaceId ON payouts (workspaceId, createdAt, id);
CREATE INDEX payouts_campaignId ON payouts (campaignId, createdAt, id);
CREATE INDEX payouts_affiliateId ON payouts (affiliateId, createdAt, id);
CREATE INDEX payouts_workspaceId_status ON payouts (workspaceId, status, createdAt, id);`,
      countTriggers('payouts', COUNTED.payouts),
    ].join('\n'),
  },
  {
    version: 7,
    // Report rollups (src/reports/rollup.ts), filled from the records already there.
    sql: [
      `CREATE TABLE rollups (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  campaignId TEXT NOT NULL,
  affiliateId TEXT NOT NULL,
  hourStart TEXT NOT NULL,
  seriesKey TEXT NOT NULL,
  rankKey TEXT,
  opens INTEGER NOT NULL,
  clicks INTEGER NOT NULL,
  signups INTEGER NOT NULL,
  saleCount INTEGER NOT NULL,
  earningsMinor INTEGER NOT NULL,
  pendingCount INTEGER NOT NULL,
  pendingMinor INTEGER NOT NULL,
  processingCount INTEGER NOT NULL,
  processingMinor INTEGER NOT NULL,
  paidCount INTEGER NOT NULL,
  paidMinor INTEGER NOT NULL,
  refundedCount INTEGER NOT NULL,
  refundedMinor INTEGER NOT NULL,
  clawbackCount INTEGER NOT NULL,
  clawbackMinor INTEGER NOT NULL,
  payoutCount INTEGER NOT NULL,
  paidOutMinor INTEGER NOT NULL,
  createdAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX rollups_created ON rollups (createdAt, id);
CREATE INDEX rollups_seriesKey ON rollups (seriesKey, createdAt, id);
CREATE INDEX rollups_rankKey ON rollups (rankKey, createdAt, id);`,
      rollupBackfillSql((table) => table),
    ].join('\n'),
  },
  {
    version: 8,
    // Tracking: publishable keys, click records and the service's own settings. Clicks are the one
    // high-volume table, so it is WITHOUT ROWID (the row lives in the primary key's tree, and the
    // indexes carry the id instead of a rowid): one tree fewer per click.
    sql: `ALTER TABLE apiKeys ADD COLUMN kind TEXT NOT NULL DEFAULT 'secret';
ALTER TABLE apiKeys ADD COLUMN allowedOrigins TEXT NOT NULL DEFAULT '[]';
CREATE TABLE clicks (
  id TEXT PRIMARY KEY NOT NULL,
  linkId TEXT NOT NULL,
  event TEXT NOT NULL,
  visitor TEXT NOT NULL,
  createdAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX clicks_created ON clicks (createdAt);
CREATE INDEX clicks_visitor ON clicks (visitor, createdAt);
CREATE TABLE settings (
  id TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX settings_created ON settings (createdAt, id);`,
  },
  {
    version: 9,
    // The affiliate portal: sign-in links and sessions (only keyed hashes of their secrets), and
    // affiliates found by e-mail for its sign-in.
    sql: [
      `CREATE INDEX affiliates_emailKey ON affiliates (emailKey, createdAt, id);
CREATE TABLE portalTokens (
  id TEXT PRIMARY KEY NOT NULL,
  kind TEXT NOT NULL,
  email TEXT NOT NULL,
  affiliateId TEXT,
  expiresAt TEXT NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX portalTokens_created ON portalTokens (createdAt, id);
CREATE INDEX portalTokens_email ON portalTokens (email, createdAt, id);`,
      countTriggers('portalTokens', COUNTED.portalTokens),
    ].join('\n'),
  },
  {
    version: 10,
    // Events (the outbox), webhooks and their deliveries, and the sequence that orders events by
    // commit. Deliveries are claimed by (status, nextAttemptAt); events are paged by sequence.
    sql: `CREATE TABLE events (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  type TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  data TEXT NOT NULL,
  createdAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX events_created ON events (createdAt, id);
CREATE INDEX events_workspaceId ON events (workspaceId, createdAt, id);
CREATE UNIQUE INDEX events_sequence ON events (sequence);
CREATE INDEX events_workspace_sequence ON events (workspaceId, sequence);
CREATE TABLE webhooks (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  description TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  disabledReason TEXT,
  consecutiveDeadDeliveries INTEGER NOT NULL,
  secret TEXT NOT NULL,
  previousSecret TEXT,
  previousSecretExpiresAt TEXT,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX webhooks_created ON webhooks (createdAt, id);
CREATE INDEX webhooks_workspaceId ON webhooks (workspaceId, createdAt, id);
CREATE TABLE webhookDeliveries (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  webhookId TEXT NOT NULL,
  eventId TEXT NOT NULL,
  eventType TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  nextAttemptAt TEXT,
  claimToken TEXT,
  lastStatusCode INTEGER,
  lastError TEXT,
  lastResponseBody TEXT,
  lastDurationMs INTEGER,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX webhookDeliveries_created ON webhookDeliveries (createdAt, id);
CREATE INDEX webhookDeliveries_workspaceId ON webhookDeliveries (workspaceId, createdAt, id);
CREATE INDEX webhookDeliveries_webhookId ON webhookDeliveries (webhookId, createdAt, id);
CREATE INDEX webhookDeliveries_eventId ON webhookDeliveries (eventId, createdAt, id);
CREATE INDEX webhookDeliveries_status ON webhookDeliveries (status, createdAt, id);
CREATE INDEX webhookDeliveries_due ON webhookDeliveries (status, nextAttemptAt);
CREATE INDEX webhookDeliveries_claim ON webhookDeliveries (claimToken);
CREATE TABLE sequences (
  id TEXT PRIMARY KEY NOT NULL,
  value INTEGER NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX sequences_created ON sequences (createdAt, id);`,
  },
  {
    version: 11,
    // Click records get time-ordered ids (UUIDv7, from the tracker), so the primary key is in time
    // order and pruning walks it: the createdAt index goes. 1M clicks: 315 to about 240 bytes each.
    sql: 'DROP INDEX clicks_created;',
  },
  {
    version: 12,
    // Reward rules on campaigns; customers, the sales hosts report and their refunds (SPEC wave 3,
    // "Customers and conversions"). A repeated invoiceId or refundId is refused by a unique index.
    sql: `ALTER TABLE campaigns ADD COLUMN recurringMonths INTEGER;
ALTER TABLE campaigns ADD COLUMN maxCommissionsPerCustomer INTEGER;
CREATE TABLE customers (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  campaignId TEXT NOT NULL,
  affiliateId TEXT NOT NULL,
  linkId TEXT,
  clickId TEXT,
  externalId TEXT NOT NULL,
  email TEXT NOT NULL,
  emailKey TEXT NOT NULL,
  name TEXT,
  stripeCustomerId TEXT,
  firstSaleAt TEXT,
  salesCount INTEGER NOT NULL,
  commissionCount INTEGER NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX customers_created ON customers (createdAt, id);
CREATE INDEX customers_workspaceId ON customers (workspaceId, createdAt, id);
CREATE INDEX customers_campaignId ON customers (campaignId, createdAt, id);
CREATE INDEX customers_affiliateId ON customers (affiliateId, createdAt, id);
CREATE UNIQUE INDEX customers_workspace_external ON customers (workspaceId, externalId);
CREATE INDEX customers_workspaceId_stripeCustomerId ON customers (workspaceId, stripeCustomerId, createdAt, id);
CREATE INDEX customers_affiliateId_emailKey ON customers (affiliateId, emailKey, createdAt, id);
CREATE INDEX customers_linkId_emailKey ON customers (linkId, emailKey, createdAt, id);
CREATE TABLE sales (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  invoiceId TEXT NOT NULL,
  chargeId TEXT,
  customerId TEXT,
  commissionId TEXT,
  currency TEXT NOT NULL,
  amountMinor INTEGER NOT NULL,
  refundedMinor INTEGER NOT NULL,
  commissionMinor INTEGER NOT NULL,
  commissionRefundedMinor INTEGER NOT NULL,
  paidAt TEXT NOT NULL,
  answer TEXT NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX sales_created ON sales (createdAt, id);
CREATE INDEX sales_workspaceId ON sales (workspaceId, createdAt, id);
CREATE INDEX sales_customerId ON sales (customerId, createdAt, id);
CREATE UNIQUE INDEX sales_workspace_invoice ON sales (workspaceId, invoiceId);
CREATE UNIQUE INDEX sales_workspace_charge ON sales (workspaceId, chargeId);
CREATE TABLE saleRefunds (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  saleId TEXT NOT NULL,
  refundId TEXT,
  amountMinor INTEGER NOT NULL,
  commissionMinor INTEGER NOT NULL,
  answer TEXT NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX saleRefunds_created ON saleRefunds (createdAt, id);
CREATE INDEX saleRefunds_workspaceId ON saleRefunds (workspaceId, createdAt, id);
CREATE INDEX saleRefunds_saleId ON saleRefunds (saleId, createdAt, id);
CREATE UNIQUE INDEX sale_refunds_workspace_refund ON saleRefunds (workspaceId, refundId);`,
  },
  {
    version: 14,
    // Every earlier webhook secret signs until its own overlap ends, however often the secret is
    // rotated meanwhile: a list of `<expiresAt> <secret>` replaces the one previous secret.
    sql: `ALTER TABLE webhooks ADD COLUMN previousSecrets TEXT NOT NULL DEFAULT '[]';
UPDATE webhooks SET previousSecrets = json_array(previousSecretExpiresAt || ' ' || previousSecret)
  WHERE previousSecret IS NOT NULL AND previousSecretExpiresAt IS NOT NULL;
ALTER TABLE webhooks DROP COLUMN previousSecret;`,
  },
  {
    version: 15,
    // Keys show when they were last used (the admin's key list).
    sql: 'ALTER TABLE apiKeys ADD COLUMN lastUsedAt TEXT;',
  },
  {
    version: 17,
    // Payment provider integrations (SPEC wave 3, "Payment provider integrations (Stripe)") and the
    // log of the events each received: an eventId is unique per integration (a redelivery is refused).
    sql: `CREATE TABLE integrations (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  provider TEXT NOT NULL,
  campaignId TEXT,
  livemode INTEGER NOT NULL,
  endpointPath TEXT NOT NULL,
  description TEXT NOT NULL,
  signingSecret TEXT NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX integrations_created ON integrations (createdAt, id);
CREATE INDEX integrations_workspaceId ON integrations (workspaceId, createdAt, id);
CREATE TABLE providerEvents (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  integrationId TEXT NOT NULL,
  eventId TEXT NOT NULL,
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT,
  commissionId TEXT,
  receivedAt TEXT NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX providerEvents_created ON providerEvents (createdAt, id);
CREATE INDEX providerEvents_workspaceId ON providerEvents (workspaceId, createdAt, id);
CREATE INDEX providerEvents_integrationId ON providerEvents (integrationId, createdAt, id);
CREATE INDEX providerEvents_status ON providerEvents (status, createdAt, id);
CREATE UNIQUE INDEX provider_events_integration_event ON providerEvents (integrationId, eventId);
CREATE INDEX providerEvents_integrationId_status ON providerEvents (integrationId, status, createdAt, id);`,
  },
  {
    version: 18,
    // The admin's lists at 100k commissions: a workspace's affiliates by earnings (its top
    // affiliates, `ordered` in the schema: the first few read here rather than 10k sorted, 37 ms),
    // its commissions of one kind (the clawbacks were a walk of all 100k, 75 ms) and of a period
    // (a range of commissionDate, in that order: 37 ms as a walk).
    sql: `CREATE INDEX affiliates_workspaceId_totalEarningsMinor ON affiliates (workspaceId, totalEarningsMinor, id);
CREATE INDEX commissions_workspaceId_kind ON commissions (workspaceId, kind, createdAt, id);
CREATE INDEX commissions_workspaceId_commissionDate ON commissions (workspaceId, commissionDate, id);`,
  },
  {
    version: 19,
    // Stripe as it sends events today (SPEC wave 4): a customer's attribution time (its click's,
    // else its lead's; sales paid before earn nothing), one customer per Stripe customer in a
    // workspace (of earlier duplicates the first made keeps it), a sale's payment intent,
    // subscription and Stripe customer, the sale each commission carries, and the ids of the payment
    // each provider event concerns (a refund waits on them for its sale).
    sql: `ALTER TABLE customers ADD COLUMN attributedAt TEXT NOT NULL DEFAULT '';
UPDATE customers SET attributedAt = min(createdAt, coalesce(firstSaleAt, createdAt), coalesce((SELECT c.createdAt FROM clicks AS c WHERE c.id = customers.clickId), createdAt));
UPDATE customers SET stripeCustomerId = NULL WHERE stripeCustomerId IS NOT NULL AND EXISTS (
  SELECT 1 FROM customers AS o WHERE o.workspaceId = customers.workspaceId AND o.stripeCustomerId = customers.stripeCustomerId
    AND (o.createdAt < customers.createdAt OR (o.createdAt = customers.createdAt AND o.id < customers.id)));
DROP INDEX customers_workspaceId_stripeCustomerId;
CREATE UNIQUE INDEX customers_workspace_stripe ON customers (workspaceId, stripeCustomerId);
ALTER TABLE sales ADD COLUMN paymentIntentId TEXT;
ALTER TABLE sales ADD COLUMN subscriptionId TEXT;
ALTER TABLE sales ADD COLUMN stripeCustomerId TEXT;
UPDATE sales SET subscriptionId = (SELECT m.stripeSubscriptionId FROM commissions AS m WHERE m.id = sales.commissionId),
  stripeCustomerId = (SELECT c.stripeCustomerId FROM customers AS c WHERE c.id = sales.customerId);
CREATE UNIQUE INDEX sales_workspace_payment_intent ON sales (workspaceId, paymentIntentId);
CREATE INDEX sales_workspaceId_stripeCustomerId ON sales (workspaceId, stripeCustomerId, createdAt, id);
ALTER TABLE commissions ADD COLUMN saleAmountMinor INTEGER;
ALTER TABLE commissions ADD COLUMN currency TEXT NOT NULL DEFAULT '';
ALTER TABLE commissions ADD COLUMN customerId TEXT;
ALTER TABLE commissions ADD COLUMN paymentIntentId TEXT;
ALTER TABLE commissions ADD COLUMN holdReasons TEXT NOT NULL DEFAULT '[]';
CREATE INDEX _migration_sales_commission ON sales (commissionId);
UPDATE commissions SET currency = coalesce((SELECT p.currency FROM campaigns AS p WHERE p.id = commissions.campaignId), 'USD'),
  saleAmountMinor = (SELECT s.amountMinor FROM sales AS s WHERE s.commissionId = commissions.id),
  customerId = (SELECT s.customerId FROM sales AS s WHERE s.commissionId = commissions.id);
DROP INDEX _migration_sales_commission;
UPDATE commissions SET customerId = (SELECT r.customerId FROM commissions AS r WHERE r.id = commissions.reversesCommissionId) WHERE kind = 'clawback';
CREATE INDEX commissions_customerId ON commissions (customerId, createdAt, id);
ALTER TABLE providerEvents ADD COLUMN invoiceId TEXT;
ALTER TABLE providerEvents ADD COLUMN chargeId TEXT;
ALTER TABLE providerEvents ADD COLUMN paymentIntentId TEXT;
ALTER TABLE providerEvents ADD COLUMN chargedMinor INTEGER NOT NULL DEFAULT 0;
ALTER TABLE providerEvents ADD COLUMN refundedMinor INTEGER NOT NULL DEFAULT 0;
CREATE INDEX providerEvents_workspaceId_invoiceId ON providerEvents (workspaceId, invoiceId, createdAt, id);
CREATE INDEX providerEvents_workspaceId_chargeId ON providerEvents (workspaceId, chargeId, createdAt, id);
CREATE INDEX providerEvents_workspaceId_paymentIntentId ON providerEvents (workspaceId, paymentIntentId, createdAt, id);`,
  },
  {
    version: 20,
    // Promo codes (SPEC wave 4): one per (workspace, upper-case code) and per Stripe promotion code;
    // a link's shareUrl (its url with the parameter renamed via, as the URL API sets it: appended
    // last, so renaming it in place gives the same text); a campaign's beacon flag; an
    // integration's optional Stripe key.
    sql: `CREATE TABLE promoCodes (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  campaignId TEXT NOT NULL,
  affiliateId TEXT NOT NULL,
  code TEXT NOT NULL,
  stripePromotionCodeId TEXT,
  uses INTEGER NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX promoCodes_created ON promoCodes (createdAt, id);
CREATE INDEX promoCodes_workspaceId ON promoCodes (workspaceId, createdAt, id);
CREATE INDEX promoCodes_campaignId ON promoCodes (campaignId, createdAt, id);
CREATE INDEX promoCodes_affiliateId ON promoCodes (affiliateId, createdAt, id);
CREATE INDEX promoCodes_workspaceId_code ON promoCodes (workspaceId, code, createdAt, id);
CREATE INDEX promoCodes_workspaceId_stripePromotionCodeId ON promoCodes (workspaceId, stripePromotionCodeId, createdAt, id);
CREATE UNIQUE INDEX promo_codes_workspace_code ON promoCodes (workspaceId, code);
CREATE UNIQUE INDEX promo_codes_workspace_stripe ON promoCodes (workspaceId, stripePromotionCodeId);
ALTER TABLE links ADD COLUMN shareUrl TEXT NOT NULL DEFAULT '';
UPDATE links SET shareUrl = replace(url, urlParameter || '=' || referralCode, 'via=' || referralCode);
ALTER TABLE campaigns ADD COLUMN beaconInstalled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE integrations ADD COLUMN apiKey TEXT;`,
  },
  {
    version: 21,
    // The referred revenue beside the commissions (the admin's overview, reports' `sales`): each
    // rollup row's sales (saleAmount, before refunds), filled for the rows already written from
    // the sales' commissions, at each level's hour and day rows (ids as src/reports/rollup.ts makes them).
    sql: `ALTER TABLE rollups ADD COLUMN salesMinor INTEGER NOT NULL DEFAULT 0;
CREATE TEMP TABLE _sales_facts AS SELECT id, sum(s) AS s FROM (
  SELECT w || '|*|' || a || '|' || h AS id, s FROM (SELECT workspaceId AS w, campaignId AS c, affiliateId AS a, substr(commissionDate, 1, 13) || ':00:00.000Z' AS h, saleAmountMinor AS s FROM commissions WHERE kind = 'sale' AND saleAmountMinor IS NOT NULL)
  UNION ALL SELECT w || '|' || c || '|*|' || h, s FROM (SELECT workspaceId AS w, campaignId AS c, substr(commissionDate, 1, 13) || ':00:00.000Z' AS h, saleAmountMinor AS s FROM commissions WHERE kind = 'sale' AND saleAmountMinor IS NOT NULL)
  UNION ALL SELECT w || '|*|*|' || h, s FROM (SELECT workspaceId AS w, substr(commissionDate, 1, 13) || ':00:00.000Z' AS h, saleAmountMinor AS s FROM commissions WHERE kind = 'sale' AND saleAmountMinor IS NOT NULL)
  UNION ALL SELECT w || '|*|' || a || '|' || d, s FROM (SELECT workspaceId AS w, affiliateId AS a, substr(commissionDate, 1, 10) AS d, saleAmountMinor AS s FROM commissions WHERE kind = 'sale' AND saleAmountMinor IS NOT NULL)
  UNION ALL SELECT w || '|' || c || '|*|' || d, s FROM (SELECT workspaceId AS w, campaignId AS c, substr(commissionDate, 1, 10) AS d, saleAmountMinor AS s FROM commissions WHERE kind = 'sale' AND saleAmountMinor IS NOT NULL)
  UNION ALL SELECT w || '|*|*|' || d, s FROM (SELECT workspaceId AS w, substr(commissionDate, 1, 10) AS d, saleAmountMinor AS s FROM commissions WHERE kind = 'sale' AND saleAmountMinor IS NOT NULL)
) GROUP BY id;
CREATE UNIQUE INDEX _sales_facts_id ON _sales_facts (id);
UPDATE rollups SET salesMinor = (SELECT f.s FROM _sales_facts AS f WHERE f.id = rollups.id) WHERE id IN (SELECT id FROM _sales_facts);
DROP TABLE _sales_facts;`,
  },
  {
    version: 22,
    // The admin's token sign-in keeps its sessions here (only keyed hashes of their secrets), so
    // signing out ends a session on every browser; ended ones are deleted by their expiry.
    sql: `CREATE TABLE adminSessions (
  id TEXT PRIMARY KEY NOT NULL,
  userId TEXT NOT NULL,
  expiresAt TEXT NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX adminSessions_created ON adminSessions (createdAt, id);
CREATE INDEX adminSessions_expiresAt ON adminSessions (expiresAt, id);`,
  },
  {
    version: 23,
    // Notifications (SPEC wave 4, "Notifications"): the outbox of e-mails, written in the same
    // transaction as what each tells (one per kind and record), and who turned which kind off.
    sql: `CREATE TABLE notifications (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  kind TEXT NOT NULL,
  recordId TEXT NOT NULL,
  campaignId TEXT,
  affiliateId TEXT,
  data TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  nextAttemptAt TEXT,
  claimToken TEXT,
  lastError TEXT,
  sentAt TEXT,
  unsubscribedAt TEXT,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX notifications_created ON notifications (createdAt, id);
CREATE INDEX notifications_workspaceId ON notifications (workspaceId, createdAt, id);
CREATE INDEX notifications_affiliateId ON notifications (affiliateId, createdAt, id);
CREATE INDEX notifications_status_nextAttemptAt ON notifications (status, nextAttemptAt, createdAt, id);
CREATE UNIQUE INDEX notifications_kind_record ON notifications (kind, recordId);
CREATE TABLE notificationPreferences (
  id TEXT PRIMARY KEY NOT NULL,
  workspaceId TEXT NOT NULL,
  scope TEXT NOT NULL,
  turnedOff TEXT NOT NULL,
  turnedOn TEXT NOT NULL,
  digest INTEGER NOT NULL,
  createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL,
  _search TEXT NOT NULL
) STRICT;
CREATE INDEX notificationPreferences_created ON notificationPreferences (createdAt, id);
CREATE INDEX notificationPreferences_workspaceId ON notificationPreferences (workspaceId, createdAt, id);`,
  },
  {
    version: 24,
    // Fraud rules and the hold status (SPEC wave 4): a campaign's rules (existing campaigns take the
    // defaults), report figures of held and voided sales, what a click tells the rules (its address
    // and device hashed under its day's salt, whether it came from a paid ad), the same copied onto
    // the customer it brought, and the devices an affiliate used the portal from.
    sql: `ALTER TABLE campaigns ADD COLUMN fraudRules TEXT NOT NULL DEFAULT '{"self_referral":"block","disposable_email":"flag","paid_ad_click":"off","address_burst":"flag","refund_rate":"flag"}';
ALTER TABLE rollups ADD COLUMN holdCount INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups ADD COLUMN holdMinor INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups ADD COLUMN voidedCount INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rollups ADD COLUMN voidedMinor INTEGER NOT NULL DEFAULT 0;
ALTER TABLE clicks ADD COLUMN address TEXT NOT NULL DEFAULT '';
ALTER TABLE clicks ADD COLUMN device TEXT NOT NULL DEFAULT '';
ALTER TABLE clicks ADD COLUMN paidAd INTEGER NOT NULL DEFAULT 0;
ALTER TABLE customers ADD COLUMN clickAddress TEXT NOT NULL DEFAULT '';
ALTER TABLE customers ADD COLUMN clickDevice TEXT NOT NULL DEFAULT '';
ALTER TABLE customers ADD COLUMN clickPaidAd INTEGER NOT NULL DEFAULT 0;
ALTER TABLE customers ADD COLUMN clickAddressCount INTEGER NOT NULL DEFAULT 0;
CREATE INDEX customers_affiliateId_clickAddress ON customers (affiliateId, clickAddress, createdAt, id);
ALTER TABLE affiliates ADD COLUMN portalDevices TEXT NOT NULL DEFAULT '[]';
ALTER TABLE affiliates ADD COLUMN refundWindow TEXT NOT NULL DEFAULT '[]';`,
  },
]

export const SCHEMA_VERSION = migrations[migrations.length - 1]!.version
