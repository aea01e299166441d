import type { PoolClient } from 'pg'
import { modelNames, models } from '../../src/storage/models.js'
import { quote, SEARCH_COLUMN } from '../../src/storage/sql.js'
import { rollupBackfillSql } from '../../src/reports/rollup-backfill.js'

// The schema, as a list of versions. Each migration is frozen: once released it never changes, so
// a database made by any older version upgrades in place by running the ones it has not seen.
// Text is COLLATE "C" so ORDER BY and equality compare code points, as JavaScript's `<` does (the
// memory storage's order), whatever the database's locale; integers are bigint so money and
// counters past 2^31 keep their value.

export interface PostgresMigration {
  version: number
  description: string
  /** Runs inside the migration's transaction; `schema` is the quoted schema name. */
  up(client: PoolClient, schema: string): Promise<void>
}

const sql = (text: (schema: string) => string) => async (client: PoolClient, schema: string) => {
  await client.query(text(schema))
}

/** The table that records which versions ran, and when. */
export const MIGRATIONS_TABLE = 'affiliate_migrations'

/** Every migration of every affiliate-service schema in a database waits on this advisory lock. */
const MIGRATION_LOCK = 0x61666673 // 'affs'

export const migrations: readonly PostgresMigration[] = [
  {
    version: 1,
    description: 'tables, unique constraints and (workspaceId, createdAt, id)-style list indexes',
    up: sql(
      (s) => `
CREATE TABLE ${s}.campaigns (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "campaignName" text COLLATE "C" NOT NULL,
  "commissionType" text COLLATE "C" NOT NULL,
  "amountMinor" bigint NOT NULL,
  "minimumPayoutMinor" bigint NOT NULL,
  "payoutId" text COLLATE "C" NOT NULL,
  "url" text COLLATE "C" NOT NULL,
  "requiresApprovalToJoin" boolean NOT NULL,
  "collectAdditionalInfo" boolean NOT NULL,
  "hideCustomerEmail" boolean NOT NULL,
  "payoutTerm" bigint NOT NULL,
  "affiliatePortalWelcomeMessage" text COLLATE "C" NOT NULL,
  "affiliateDashboardText" text COLLATE "C" NOT NULL,
  "stripeCouponId" text COLLATE "C" NOT NULL,
  "allowedUrlParameters" text[] NOT NULL,
  "isDefault" boolean NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX campaigns_created ON ${s}.campaigns ("createdAt", "id");
CREATE INDEX campaigns_workspace ON ${s}.campaigns ("workspaceId", "createdAt", "id");

CREATE TABLE ${s}.affiliates (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "campaignId" text COLLATE "C" NOT NULL,
  "email" text COLLATE "C" NOT NULL,
  "emailKey" text COLLATE "C" NOT NULL,
  "firstName" text COLLATE "C" NOT NULL,
  "lastName" text COLLATE "C" NOT NULL,
  "notes" text COLLATE "C" NOT NULL,
  "payoutEmail" text COLLATE "C" NOT NULL,
  "payoutMethod" text COLLATE "C",
  "details" text COLLATE "C",
  "isActive" boolean NOT NULL,
  "isBanned" boolean NOT NULL,
  "totalOpens" bigint NOT NULL,
  "totalClicks" bigint NOT NULL,
  "totalSignups" bigint NOT NULL,
  "totalEarningsMinor" bigint NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX affiliates_created ON ${s}.affiliates ("createdAt", "id");
CREATE INDEX affiliates_workspace ON ${s}.affiliates ("workspaceId", "createdAt", "id");
CREATE INDEX affiliates_campaign ON ${s}.affiliates ("campaignId", "createdAt", "id");
CREATE UNIQUE INDEX affiliates_campaign_email ON ${s}.affiliates ("campaignId", "emailKey");

CREATE TABLE ${s}.links (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "campaignId" text COLLATE "C" NOT NULL,
  "affiliateId" text COLLATE "C" NOT NULL,
  "userId" text COLLATE "C",
  "referralCode" text COLLATE "C" NOT NULL,
  "urlParameter" text COLLATE "C" NOT NULL,
  "url" text COLLATE "C" NOT NULL,
  "totalOpens" bigint NOT NULL,
  "totalClicks" bigint NOT NULL,
  "totalSignups" bigint NOT NULL,
  "totalEarningsMinor" bigint NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX links_created ON ${s}.links ("createdAt", "id");
CREATE INDEX links_workspace ON ${s}.links ("workspaceId", "createdAt", "id");
CREATE INDEX links_affiliate ON ${s}.links ("affiliateId", "createdAt", "id");
CREATE UNIQUE INDEX links_referral_code ON ${s}.links ("referralCode");

CREATE TABLE ${s}.commissions (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "campaignId" text COLLATE "C" NOT NULL,
  "affiliateId" text COLLATE "C" NOT NULL,
  "referredUser" text COLLATE "C" NOT NULL,
  "referredUserKey" text COLLATE "C" NOT NULL,
  "amountMinor" bigint NOT NULL,
  "adminEarnedMinor" bigint NOT NULL,
  "status" text COLLATE "C" NOT NULL,
  "commissionDate" text COLLATE "C" NOT NULL,
  "remarks" text COLLATE "C",
  "payoutDate" text COLLATE "C",
  "name" text COLLATE "C",
  "isSelfReferral" boolean NOT NULL,
  "isWalletPayment" bigint NOT NULL,
  "chargeId" text COLLATE "C",
  "invoiceId" text COLLATE "C",
  "stripeSubscriptionId" text COLLATE "C",
  "linkId" text COLLATE "C",
  "referralCode" text COLLATE "C",
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX commissions_created ON ${s}.commissions ("createdAt", "id");
CREATE INDEX commissions_workspace ON ${s}.commissions ("workspaceId", "createdAt", "id");
CREATE INDEX commissions_workspace_status ON ${s}.commissions ("workspaceId", "status", "createdAt", "id");
CREATE INDEX commissions_affiliate ON ${s}.commissions ("affiliateId", "createdAt", "id");
CREATE INDEX commissions_campaign ON ${s}.commissions ("campaignId", "createdAt", "id");
CREATE INDEX commissions_referred_user ON ${s}.commissions ("referredUserKey", "createdAt", "id");
-- NULLs are distinct in a unique index: records without an invoice or charge never collide.
CREATE UNIQUE INDEX commissions_workspace_invoice ON ${s}.commissions ("workspaceId", "invoiceId");
CREATE UNIQUE INDEX commissions_workspace_charge ON ${s}.commissions ("workspaceId", "chargeId");

CREATE TABLE ${s}."apiKeys" (
  "id" text COLLATE "C" PRIMARY KEY,
  "hash" text COLLATE "C" NOT NULL,
  "lookup" text COLLATE "C" NOT NULL,
  "prefix" text COLLATE "C" NOT NULL,
  "userId" text COLLATE "C" NOT NULL,
  "workspaceIds" text[] NOT NULL,
  "label" text COLLATE "C" NOT NULL,
  "revokedAt" text COLLATE "C",
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX api_keys_created ON ${s}."apiKeys" ("createdAt", "id");
CREATE INDEX api_keys_lookup ON ${s}."apiKeys" ("lookup");
CREATE UNIQUE INDEX api_keys_hash ON ${s}."apiKeys" ("hash");

CREATE TABLE ${s}.idempotency (
  "id" text COLLATE "C" PRIMARY KEY,
  "scopeKey" text COLLATE "C" NOT NULL,
  "requestHash" text COLLATE "C" NOT NULL,
  "state" text COLLATE "C" NOT NULL,
  "status" bigint NOT NULL,
  "body" text COLLATE "C" NOT NULL,
  "expiresAt" text COLLATE "C" NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX idempotency_created ON ${s}.idempotency ("createdAt", "id");
CREATE UNIQUE INDEX idempotency_scope ON ${s}.idempotency ("scopeKey");
`,
    ),
  },
  {
    version: 2,
    description: 'trigram indexes for `contains`, when the pg_trgm extension is there or can be created',
    async up(client, schema) {
      // pg_trgm ships with PostgreSQL's contrib package and is a trusted extension (a database
      // owner may create it), but neither is certain: without it `contains` still works, by a
      // scan of the rows the other conditions leave, so the migration goes on without the indexes.
      await client.query('SAVEPOINT trgm')
      try {
        await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm')
        await client.query('RELEASE SAVEPOINT trgm')
      } catch {
        await client.query('ROLLBACK TO SAVEPOINT trgm')
      }
      const found = await client.query<{ schema: string }>(
        "SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'",
      )
      const where = found.rows[0]?.schema
      if (where === undefined) return
      const opclass = `${quote(where)}.gin_trgm_ops`
      for (const table of ['campaigns', 'affiliates', 'links', 'commissions', '"apiKeys"']) {
        const name = `${table.replaceAll('"', '').replace('apiKeys', 'api_keys')}_search_trgm`
        await client.query(`CREATE INDEX ${name} ON ${schema}.${table} USING gin (${SEARCH_COLUMN} ${opclass})`)
      }
    },
  },
  {
    version: 3,
    description: 'narrow indexes for the exact totals of list pages',
    // A list page also asks for its total, which PostgreSQL can only count. On (workspaceId) alone
    // a btree stores each workspace once with a list of row ids (deduplication), so counting a
    // workspace's 100k rows reads well under a megabyte instead of the table: about 4x faster.
    up: sql(
      (s) => `
CREATE INDEX campaigns_workspace_count ON ${s}.campaigns ("workspaceId");
CREATE INDEX affiliates_workspace_count ON ${s}.affiliates ("workspaceId");
CREATE INDEX links_workspace_count ON ${s}.links ("workspaceId");
CREATE INDEX commissions_workspace_count ON ${s}.commissions ("workspaceId");
CREATE INDEX commissions_workspace_status_count ON ${s}.commissions ("workspaceId", "status");
`,
    ),
  },
  {
    version: 4,
    description: 'payouts and clawbacks: campaign currency, commission kind, dueAt, payoutId, refunds; the payouts table',
    // Existing commissions become sales, due `payoutTerm` days after their commissionDate, written
    // as `dueAt()` writes it (UTC, milliseconds, Z).
    up: sql(
      (s) => `
ALTER TABLE ${s}.campaigns ADD COLUMN "currency" text COLLATE "C" NOT NULL DEFAULT 'USD';
ALTER TABLE ${s}.campaigns ADD COLUMN "attributionWindowDays" bigint NOT NULL DEFAULT 30;
ALTER TABLE ${s}.commissions ADD COLUMN "kind" text COLLATE "C" NOT NULL DEFAULT 'sale';
ALTER TABLE ${s}.commissions ADD COLUMN "dueAt" text COLLATE "C";
ALTER TABLE ${s}.commissions ADD COLUMN "payoutId" text COLLATE "C";
ALTER TABLE ${s}.commissions ADD COLUMN "refundedMinor" bigint NOT NULL DEFAULT 0;
ALTER TABLE ${s}.commissions ADD COLUMN "reversesCommissionId" text COLLATE "C";
UPDATE ${s}.commissions c SET "dueAt" = to_char(
  (c."commissionDate"::timestamptz + make_interval(days => coalesce(p."payoutTerm", 0)::int)) AT TIME ZONE 'UTC',
  'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM ${s}.campaigns p WHERE p."id" = c."campaignId";
UPDATE ${s}.commissions SET "dueAt" = "commissionDate" WHERE "dueAt" IS NULL;
ALTER TABLE ${s}.commissions ALTER COLUMN "dueAt" SET NOT NULL;
CREATE INDEX commissions_payout ON ${s}.commissions ("payoutId", "createdAt", "id");

CREATE TABLE ${s}.payouts (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "campaignId" text COLLATE "C" NOT NULL,
  "affiliateId" text COLLATE "C" NOT NULL,
  "currency" text COLLATE "C" NOT NULL,
  "amountMinor" bigint NOT NULL,
  "commissionCount" bigint NOT NULL,
  "status" text COLLATE "C" NOT NULL,
  "payoutMethod" text COLLATE "C" NOT NULL,
  "payoutEmail" text COLLATE "C" NOT NULL,
  "periodEnd" text COLLATE "C" NOT NULL,
  "externalReference" text COLLATE "C",
  "failureReason" text COLLATE "C",
  "paidAt" text COLLATE "C",
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX payouts_created ON ${s}.payouts ("createdAt", "id");
CREATE INDEX payouts_workspace ON ${s}.payouts ("workspaceId", "createdAt", "id");
CREATE INDEX payouts_workspace_status ON ${s}.payouts ("workspaceId", "status", "createdAt", "id");
CREATE INDEX payouts_campaign ON ${s}.payouts ("campaignId", "createdAt", "id");
CREATE INDEX payouts_affiliate ON ${s}.payouts ("affiliateId", "createdAt", "id");
-- Statistics for the new columns now, not at autovacuum's next pass: without them the planner
-- guesses "payoutId" IS NULL is rare and serves a payout run's claim (id = ANY(...) AND "payoutId"
-- IS NULL) from commissions_payout, walking every unclaimed commission per payout.
ANALYZE ${s}.commissions;
`,
    ),
  },
  {
    version: 5,
    description: 'report rollups per workspace, campaign, affiliate and UTC hour, filled from the records already there',
    up: sql(
      (s) => `
CREATE TABLE ${s}.rollups (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "campaignId" text COLLATE "C" NOT NULL,
  "affiliateId" text COLLATE "C" NOT NULL,
  "hourStart" text COLLATE "C" NOT NULL,
  "seriesKey" text COLLATE "C" NOT NULL,
  "rankKey" text COLLATE "C",
  "opens" bigint NOT NULL,
  "clicks" bigint NOT NULL,
  "signups" bigint NOT NULL,
  "saleCount" bigint NOT NULL,
  "earningsMinor" bigint NOT NULL,
  "pendingCount" bigint NOT NULL,
  "pendingMinor" bigint NOT NULL,
  "processingCount" bigint NOT NULL,
  "processingMinor" bigint NOT NULL,
  "paidCount" bigint NOT NULL,
  "paidMinor" bigint NOT NULL,
  "refundedCount" bigint NOT NULL,
  "refundedMinor" bigint NOT NULL,
  "clawbackCount" bigint NOT NULL,
  "clawbackMinor" bigint NOT NULL,
  "payoutCount" bigint NOT NULL,
  "paidOutMinor" bigint NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX rollups_created ON ${s}.rollups ("createdAt", "id");
CREATE INDEX rollups_series ON ${s}.rollups ("seriesKey", "createdAt", "id");
CREATE INDEX rollups_rank ON ${s}.rollups ("rankKey", "createdAt", "id");
${rollupBackfillSql((table) => `${s}.${table}`)}
ANALYZE ${s}.rollups;
`,
    ),
  },
  {
    version: 6,
    description: 'tracking: publishable keys (kind, allowedOrigins), click records, settings',
    up: sql(
      (s) => `
ALTER TABLE ${s}."apiKeys" ADD COLUMN "kind" text COLLATE "C" NOT NULL DEFAULT 'secret';
ALTER TABLE ${s}."apiKeys" ADD COLUMN "allowedOrigins" text[] NOT NULL DEFAULT '{}';
CREATE TABLE ${s}.clicks (
  "id" text COLLATE "C" PRIMARY KEY,
  "linkId" text COLLATE "C" NOT NULL,
  "event" text COLLATE "C" NOT NULL,
  "visitor" text COLLATE "C" NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX clicks_created ON ${s}.clicks ("createdAt", "id");
CREATE INDEX clicks_visitor ON ${s}.clicks ("visitor", "createdAt", "id");
CREATE TABLE ${s}.settings (
  "id" text COLLATE "C" PRIMARY KEY,
  "value" text COLLATE "C" NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX settings_created ON ${s}.settings ("createdAt", "id");
`,
    ),
  },
  {
    version: 7,
    description: 'the affiliate portal: sign-in links and sessions (keyed hashes only); affiliates by e-mail',
    up: sql(
      (s) => `
CREATE INDEX affiliates_email ON ${s}.affiliates ("emailKey", "createdAt", "id");
CREATE TABLE ${s}."portalTokens" (
  "id" text COLLATE "C" PRIMARY KEY,
  "kind" text COLLATE "C" NOT NULL,
  "email" text COLLATE "C" NOT NULL,
  "affiliateId" text COLLATE "C",
  "expiresAt" text COLLATE "C" NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX portal_tokens_created ON ${s}."portalTokens" ("createdAt", "id");
CREATE INDEX portal_tokens_email ON ${s}."portalTokens" ("email", "createdAt", "id");
`,
    ),
  },
  {
    version: 8,
    description: 'events (the outbox), webhooks, webhook deliveries and the event sequence',
    up: sql(
      (s) => `
CREATE TABLE ${s}.events (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "type" text COLLATE "C" NOT NULL,
  "sequence" bigint NOT NULL,
  "data" text COLLATE "C" NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX events_created ON ${s}.events ("createdAt", "id");
CREATE INDEX events_workspace ON ${s}.events ("workspaceId", "createdAt", "id");
CREATE UNIQUE INDEX events_sequence ON ${s}.events ("sequence");
CREATE INDEX events_workspace_sequence ON ${s}.events ("workspaceId", "sequence");
CREATE TABLE ${s}.webhooks (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "url" text COLLATE "C" NOT NULL,
  "events" text[] NOT NULL,
  "description" text COLLATE "C" NOT NULL,
  "enabled" boolean NOT NULL,
  "disabledReason" text COLLATE "C",
  "consecutiveDeadDeliveries" bigint NOT NULL,
  "secret" text COLLATE "C" NOT NULL,
  "previousSecret" text COLLATE "C",
  "previousSecretExpiresAt" text COLLATE "C",
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX webhooks_created ON ${s}.webhooks ("createdAt", "id");
CREATE INDEX webhooks_workspace ON ${s}.webhooks ("workspaceId", "createdAt", "id");
CREATE TABLE ${s}."webhookDeliveries" (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "webhookId" text COLLATE "C" NOT NULL,
  "eventId" text COLLATE "C" NOT NULL,
  "eventType" text COLLATE "C" NOT NULL,
  "status" text COLLATE "C" NOT NULL,
  "attempts" bigint NOT NULL,
  "nextAttemptAt" text COLLATE "C",
  "claimToken" text COLLATE "C",
  "lastStatusCode" bigint,
  "lastError" text COLLATE "C",
  "lastResponseBody" text COLLATE "C",
  "lastDurationMs" bigint,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX deliveries_created ON ${s}."webhookDeliveries" ("createdAt", "id");
CREATE INDEX deliveries_workspace ON ${s}."webhookDeliveries" ("workspaceId", "createdAt", "id");
CREATE INDEX deliveries_webhook ON ${s}."webhookDeliveries" ("webhookId", "createdAt", "id");
CREATE INDEX deliveries_event ON ${s}."webhookDeliveries" ("eventId", "createdAt", "id");
CREATE INDEX deliveries_status ON ${s}."webhookDeliveries" ("status", "createdAt", "id");
CREATE INDEX deliveries_due ON ${s}."webhookDeliveries" ("status", "nextAttemptAt");
CREATE INDEX deliveries_claim ON ${s}."webhookDeliveries" ("claimToken");
CREATE TABLE ${s}.sequences (
  "id" text COLLATE "C" PRIMARY KEY,
  "value" bigint NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX sequences_created ON ${s}.sequences ("createdAt", "id");
`,
    ),
  },
  {
    version: 9,
    description: 'click records are pruned by their time-ordered ids: the createdAt index goes',
    up: sql((s) => `DROP INDEX ${s}.clicks_created;`),
  },
  {
    version: 10,
    description: 'report rollup rows keep half of each page free, so moving their counters is a HOT update',
    // A rollup row only ever changes its counters, none of them indexed: with room on its page the
    // new version stays there and no index is touched (a payout run's status move over 200k rows:
    // 10.7 s with full pages, 1.8 s). Pages written from now on keep the room; older ones gain it
    // as their rows move.
    up: sql((s) => `ALTER TABLE ${s}.rollups SET (fillfactor = 50);`),
  },
  {
    version: 11,
    description:
      'reward rules on campaigns; customers, reported sales and their refunds (a repeated invoiceId or refundId is refused by a unique index)',
    up: sql(
      (s) => `
ALTER TABLE ${s}.campaigns ADD COLUMN "recurringMonths" bigint;
ALTER TABLE ${s}.campaigns ADD COLUMN "maxCommissionsPerCustomer" bigint;
CREATE TABLE ${s}.customers (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "campaignId" text COLLATE "C" NOT NULL,
  "affiliateId" text COLLATE "C" NOT NULL,
  "linkId" text COLLATE "C",
  "clickId" text COLLATE "C",
  "externalId" text COLLATE "C" NOT NULL,
  "email" text COLLATE "C" NOT NULL,
  "emailKey" text COLLATE "C" NOT NULL,
  "name" text COLLATE "C",
  "stripeCustomerId" text COLLATE "C",
  "firstSaleAt" text COLLATE "C",
  "salesCount" bigint NOT NULL,
  "commissionCount" bigint NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX customers_created ON ${s}.customers ("createdAt", "id");
CREATE INDEX customers_workspace ON ${s}.customers ("workspaceId", "createdAt", "id");
CREATE INDEX customers_campaign ON ${s}.customers ("campaignId", "createdAt", "id");
CREATE INDEX customers_affiliate ON ${s}.customers ("affiliateId", "createdAt", "id");
CREATE UNIQUE INDEX customers_workspace_external ON ${s}.customers ("workspaceId", "externalId");
CREATE INDEX customers_stripe ON ${s}.customers ("workspaceId", "stripeCustomerId", "createdAt", "id");
CREATE INDEX customers_affiliate_email ON ${s}.customers ("affiliateId", "emailKey", "createdAt", "id");
CREATE INDEX customers_link_email ON ${s}.customers ("linkId", "emailKey", "createdAt", "id");
CREATE TABLE ${s}.sales (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "invoiceId" text COLLATE "C" NOT NULL,
  "chargeId" text COLLATE "C",
  "customerId" text COLLATE "C",
  "commissionId" text COLLATE "C",
  "currency" text COLLATE "C" NOT NULL,
  "amountMinor" bigint NOT NULL,
  "refundedMinor" bigint NOT NULL,
  "commissionMinor" bigint NOT NULL,
  "commissionRefundedMinor" bigint NOT NULL,
  "paidAt" text COLLATE "C" NOT NULL,
  "answer" text COLLATE "C" NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX sales_created ON ${s}.sales ("createdAt", "id");
CREATE INDEX sales_workspace ON ${s}.sales ("workspaceId", "createdAt", "id");
CREATE INDEX sales_customer ON ${s}.sales ("customerId", "createdAt", "id");
CREATE UNIQUE INDEX sales_workspace_invoice ON ${s}.sales ("workspaceId", "invoiceId");
CREATE UNIQUE INDEX sales_workspace_charge ON ${s}.sales ("workspaceId", "chargeId");
CREATE TABLE ${s}."saleRefunds" (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "saleId" text COLLATE "C" NOT NULL,
  "refundId" text COLLATE "C",
  "amountMinor" bigint NOT NULL,
  "commissionMinor" bigint NOT NULL,
  "answer" text COLLATE "C" NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX sale_refunds_created ON ${s}."saleRefunds" ("createdAt", "id");
CREATE INDEX sale_refunds_workspace ON ${s}."saleRefunds" ("workspaceId", "createdAt", "id");
CREATE INDEX sale_refunds_sale ON ${s}."saleRefunds" ("saleId", "createdAt", "id");
CREATE UNIQUE INDEX sale_refunds_workspace_refund ON ${s}."saleRefunds" ("workspaceId", "refundId");
`,
    ),
  },
  {
    version: 13,
    description:
      'events take their sequence from a database sequence (no row every write waits on); every earlier webhook secret signs until its own overlap ends',
    up: sql(
      // The event sequence goes on from the counter record (or the highest stored event).
      (s) => `CREATE SEQUENCE ${s}.events_seq AS bigint;
SELECT setval('${s}.events_seq', greatest(1, n), n > 0)
  FROM (SELECT greatest(coalesce((SELECT max("value") FROM ${s}.sequences WHERE "id" = 'events'), 0),
                        coalesce((SELECT max("sequence") FROM ${s}.events), 0)) AS n) AS current;
ALTER TABLE ${s}.webhooks ADD COLUMN "previousSecrets" text[] NOT NULL DEFAULT '{}';
UPDATE ${s}.webhooks SET "previousSecrets" = ARRAY["previousSecretExpiresAt" || ' ' || "previousSecret"]
  WHERE "previousSecret" IS NOT NULL AND "previousSecretExpiresAt" IS NOT NULL;
ALTER TABLE ${s}.webhooks DROP COLUMN "previousSecret";`,
    ),
  },
  {
    version: 14,
    description: 'keys show when they were last used',
    up: sql((s) => `ALTER TABLE ${s}."apiKeys" ADD COLUMN "lastUsedAt" text COLLATE "C";`),
  },
  {
    version: 16,
    description: 'payment provider integrations and the log of their events (an eventId is unique per integration)',
    up: sql(
      (s) => `
CREATE TABLE ${s}.integrations (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "provider" text COLLATE "C" NOT NULL,
  "campaignId" text COLLATE "C",
  "livemode" boolean NOT NULL,
  "endpointPath" text COLLATE "C" NOT NULL,
  "description" text COLLATE "C" NOT NULL,
  "signingSecret" text COLLATE "C" NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX integrations_created ON ${s}.integrations ("createdAt", "id");
CREATE INDEX integrations_workspace ON ${s}.integrations ("workspaceId", "createdAt", "id");
CREATE TABLE ${s}."providerEvents" (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "integrationId" text COLLATE "C" NOT NULL,
  "eventId" text COLLATE "C" NOT NULL,
  "type" text COLLATE "C" NOT NULL,
  "status" text COLLATE "C" NOT NULL,
  "reason" text COLLATE "C",
  "commissionId" text COLLATE "C",
  "receivedAt" text COLLATE "C" NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX provider_events_created ON ${s}."providerEvents" ("createdAt", "id");
CREATE INDEX provider_events_workspace ON ${s}."providerEvents" ("workspaceId", "createdAt", "id");
CREATE INDEX provider_events_integration ON ${s}."providerEvents" ("integrationId", "createdAt", "id");
CREATE INDEX provider_events_status ON ${s}."providerEvents" ("status", "createdAt", "id");
CREATE UNIQUE INDEX provider_events_integration_event ON ${s}."providerEvents" ("integrationId", "eventId");
CREATE INDEX provider_events_integration_status ON ${s}."providerEvents" ("integrationId", "status", "createdAt", "id");
`,
    ),
  },
  {
    version: 17,
    description: "the admin's lists: a workspace's affiliates by earnings, its commissions of one kind and of a period, each from an index",
    up: sql(
      (s) => `CREATE INDEX affiliates_workspace_earnings ON ${s}.affiliates ("workspaceId", "totalEarningsMinor", "id");
CREATE INDEX commissions_workspace_kind ON ${s}.commissions ("workspaceId", "kind", "createdAt", "id");
CREATE INDEX commissions_workspace_date ON ${s}.commissions ("workspaceId", "commissionDate", "id");`,
    ),
  },
  {
    version: 18,
    description:
      "Stripe as it sends events today: customers' attribution time and one customer per Stripe customer, sales' payment intent, the sale each commission carries, the payment each provider event concerns",
    up: sql(
      // Of earlier duplicate Stripe customers in a workspace, the customer made first keeps it.
      (s) => `ALTER TABLE ${s}.customers ADD COLUMN "attributedAt" text COLLATE "C" NOT NULL DEFAULT '';
UPDATE ${s}.customers AS u SET "attributedAt" = LEAST(u."createdAt", COALESCE(u."firstSaleAt", u."createdAt"),
  COALESCE((SELECT c."createdAt" FROM ${s}.clicks AS c WHERE c."id" = u."clickId"), u."createdAt"));
UPDATE ${s}.customers AS u SET "stripeCustomerId" = NULL WHERE u."stripeCustomerId" IS NOT NULL AND EXISTS (
  SELECT 1 FROM ${s}.customers AS o WHERE o."workspaceId" = u."workspaceId" AND o."stripeCustomerId" = u."stripeCustomerId"
    AND (o."createdAt" < u."createdAt" OR (o."createdAt" = u."createdAt" AND o."id" < u."id")));
DROP INDEX ${s}.customers_stripe;
CREATE UNIQUE INDEX customers_workspace_stripe ON ${s}.customers ("workspaceId", "stripeCustomerId");
ALTER TABLE ${s}.sales ADD COLUMN "paymentIntentId" text COLLATE "C";
ALTER TABLE ${s}.sales ADD COLUMN "subscriptionId" text COLLATE "C";
ALTER TABLE ${s}.sales ADD COLUMN "stripeCustomerId" text COLLATE "C";
UPDATE ${s}.sales AS u SET "subscriptionId" = m."stripeSubscriptionId" FROM ${s}.commissions AS m WHERE m."id" = u."commissionId";
UPDATE ${s}.sales AS u SET "stripeCustomerId" = c."stripeCustomerId" FROM ${s}.customers AS c WHERE c."id" = u."customerId";
CREATE UNIQUE INDEX sales_workspace_payment_intent ON ${s}.sales ("workspaceId", "paymentIntentId");
CREATE INDEX sales_stripe_customer ON ${s}.sales ("workspaceId", "stripeCustomerId", "createdAt", "id");
ALTER TABLE ${s}.commissions ADD COLUMN "saleAmountMinor" bigint;
ALTER TABLE ${s}.commissions ADD COLUMN "currency" text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE ${s}.commissions ADD COLUMN "customerId" text COLLATE "C";
ALTER TABLE ${s}.commissions ADD COLUMN "paymentIntentId" text COLLATE "C";
ALTER TABLE ${s}.commissions ADD COLUMN "holdReasons" text[] NOT NULL DEFAULT '{}';
UPDATE ${s}.commissions AS u SET "currency" = p."currency" FROM ${s}.campaigns AS p WHERE p."id" = u."campaignId";
UPDATE ${s}.commissions AS u SET "currency" = 'USD' WHERE u."currency" = '';
UPDATE ${s}.commissions AS u SET "saleAmountMinor" = v."amountMinor", "customerId" = v."customerId" FROM ${s}.sales AS v WHERE v."commissionId" = u."id";
UPDATE ${s}.commissions AS u SET "customerId" = r."customerId" FROM ${s}.commissions AS r WHERE r."id" = u."reversesCommissionId" AND u."kind" = 'clawback';
CREATE INDEX commissions_customer ON ${s}.commissions ("customerId", "createdAt", "id");
ALTER TABLE ${s}."providerEvents" ADD COLUMN "invoiceId" text COLLATE "C";
ALTER TABLE ${s}."providerEvents" ADD COLUMN "chargeId" text COLLATE "C";
ALTER TABLE ${s}."providerEvents" ADD COLUMN "paymentIntentId" text COLLATE "C";
ALTER TABLE ${s}."providerEvents" ADD COLUMN "chargedMinor" bigint NOT NULL DEFAULT 0;
ALTER TABLE ${s}."providerEvents" ADD COLUMN "refundedMinor" bigint NOT NULL DEFAULT 0;
CREATE INDEX provider_events_invoice ON ${s}."providerEvents" ("workspaceId", "invoiceId", "createdAt", "id");
CREATE INDEX provider_events_charge ON ${s}."providerEvents" ("workspaceId", "chargeId", "createdAt", "id");
CREATE INDEX provider_events_payment_intent ON ${s}."providerEvents" ("workspaceId", "paymentIntentId", "createdAt", "id");`,
    ),
  },
  {
    version: 19,
    description:
      "promo codes; a link's shareUrl (its url with the parameter renamed via); a campaign's beacon flag; an integration's optional Stripe key",
    up: sql(
      (s) => `CREATE TABLE ${s}."promoCodes" (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "campaignId" text COLLATE "C" NOT NULL,
  "affiliateId" text COLLATE "C" NOT NULL,
  "code" text COLLATE "C" NOT NULL,
  "stripePromotionCodeId" text COLLATE "C",
  "uses" bigint NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX promo_codes_created ON ${s}."promoCodes" ("createdAt", "id");
CREATE INDEX promo_codes_workspace ON ${s}."promoCodes" ("workspaceId", "createdAt", "id");
CREATE INDEX promo_codes_campaign ON ${s}."promoCodes" ("campaignId", "createdAt", "id");
CREATE INDEX promo_codes_affiliate ON ${s}."promoCodes" ("affiliateId", "createdAt", "id");
CREATE INDEX promo_codes_code ON ${s}."promoCodes" ("workspaceId", "code", "createdAt", "id");
CREATE INDEX promo_codes_stripe ON ${s}."promoCodes" ("workspaceId", "stripePromotionCodeId", "createdAt", "id");
CREATE UNIQUE INDEX promo_codes_workspace_code ON ${s}."promoCodes" ("workspaceId", "code");
CREATE UNIQUE INDEX promo_codes_workspace_stripe ON ${s}."promoCodes" ("workspaceId", "stripePromotionCodeId");
ALTER TABLE ${s}.links ADD COLUMN "shareUrl" text COLLATE "C" NOT NULL DEFAULT '';
UPDATE ${s}.links SET "shareUrl" = replace("url", "urlParameter" || '=' || "referralCode", 'via=' || "referralCode");
ALTER TABLE ${s}.campaigns ADD COLUMN "beaconInstalled" boolean NOT NULL DEFAULT false;
ALTER TABLE ${s}.integrations ADD COLUMN "apiKey" text COLLATE "C";`,
    ),
  },
  {
    version: 20,
    description:
      "the referred revenue beside the commissions: each rollup row's sales (saleAmount, before refunds), filled for the rows already written",
    up: sql(
      (s) => `ALTER TABLE ${s}.rollups ADD COLUMN "salesMinor" bigint NOT NULL DEFAULT 0;
CREATE TEMP TABLE _sales_facts ON COMMIT DROP AS
WITH base AS (SELECT "workspaceId" AS w, "campaignId" AS c, "affiliateId" AS a, substr("commissionDate", 1, 13) || ':00:00.000Z' AS h, substr("commissionDate", 1, 10) AS d, "saleAmountMinor" AS s
  FROM ${s}.commissions WHERE "kind" = 'sale' AND "saleAmountMinor" IS NOT NULL)
SELECT id, sum(s) AS s FROM (
  SELECT w || '|*|' || a || '|' || h AS id, s FROM base
  UNION ALL SELECT w || '|' || c || '|*|' || h, s FROM base
  UNION ALL SELECT w || '|*|*|' || h, s FROM base
  UNION ALL SELECT w || '|*|' || a || '|' || d, s FROM base
  UNION ALL SELECT w || '|' || c || '|*|' || d, s FROM base
  UNION ALL SELECT w || '|*|*|' || d, s FROM base
) AS facts GROUP BY id;
UPDATE ${s}.rollups AS r SET "salesMinor" = f.s FROM _sales_facts AS f WHERE f.id = r."id";`,
    ),
  },
  {
    version: 21,
    description: "the admin's token sign-in sessions (keyed hashes only), so signing out ends one everywhere",
    up: sql(
      (s) => `CREATE TABLE ${s}."adminSessions" (
  "id" text COLLATE "C" PRIMARY KEY,
  "userId" text COLLATE "C" NOT NULL,
  "expiresAt" text COLLATE "C" NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX admin_sessions_created ON ${s}."adminSessions" ("createdAt", "id");
CREATE INDEX admin_sessions_expires ON ${s}."adminSessions" ("expiresAt", "id");`,
    ),
  },
  {
    version: 22,
    description: 'notifications: the outbox of e-mails (one per kind and record) and who turned which kind off',
    up: sql(
      (s) => `CREATE TABLE ${s}."notifications" (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "kind" text COLLATE "C" NOT NULL,
  "recordId" text COLLATE "C" NOT NULL,
  "campaignId" text COLLATE "C",
  "affiliateId" text COLLATE "C",
  "data" text COLLATE "C" NOT NULL,
  "status" text COLLATE "C" NOT NULL,
  "attempts" bigint NOT NULL,
  "nextAttemptAt" text COLLATE "C",
  "claimToken" text COLLATE "C",
  "lastError" text COLLATE "C",
  "sentAt" text COLLATE "C",
  "unsubscribedAt" text COLLATE "C",
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX notifications_created ON ${s}."notifications" ("createdAt", "id");
CREATE INDEX notifications_workspaceId ON ${s}."notifications" ("workspaceId", "createdAt", "id");
CREATE INDEX notifications_affiliateId ON ${s}."notifications" ("affiliateId", "createdAt", "id");
CREATE INDEX notifications_status_nextAttemptAt ON ${s}."notifications" ("status", "nextAttemptAt", "createdAt", "id");
CREATE UNIQUE INDEX notifications_kind_record ON ${s}."notifications" ("kind", "recordId");
CREATE TABLE ${s}."notificationPreferences" (
  "id" text COLLATE "C" PRIMARY KEY,
  "workspaceId" text COLLATE "C" NOT NULL,
  "scope" text COLLATE "C" NOT NULL,
  "turnedOff" text[] NOT NULL,
  "turnedOn" text[] NOT NULL,
  "digest" boolean NOT NULL,
  "createdAt" text COLLATE "C" NOT NULL,
  "updatedAt" text COLLATE "C" NOT NULL,
  "_search" text COLLATE "C" NOT NULL
);
CREATE INDEX notificationPreferences_created ON ${s}."notificationPreferences" ("createdAt", "id");
CREATE INDEX notificationPreferences_workspaceId ON ${s}."notificationPreferences" ("workspaceId", "createdAt", "id");`,
    ),
  },
  {
    version: 23,
    description:
      'Fraud rules and the hold status, report figures: held and voided sales counted by the rollups (on their own, so a rollups table rebuilt by migration 5 gains them again, as it does salesMinor)',
    up: sql(
      (s) => `ALTER TABLE ${s}."rollups" ADD COLUMN "holdCount" bigint NOT NULL DEFAULT 0;
ALTER TABLE ${s}."rollups" ADD COLUMN "holdMinor" bigint NOT NULL DEFAULT 0;
ALTER TABLE ${s}."rollups" ADD COLUMN "voidedCount" bigint NOT NULL DEFAULT 0;
ALTER TABLE ${s}."rollups" ADD COLUMN "voidedMinor" bigint NOT NULL DEFAULT 0;`,
    ),
  },
  {
    version: 24,
    description:
      "Fraud rules and the hold status: campaigns' fraud rules, clicks' address, device and paid-ad flag, customers' click facts and address count, affiliates' portal devices and kept refund window",
    up: sql(
      (
        s,
      ) => `ALTER TABLE ${s}."campaigns" ADD COLUMN "fraudRules" text COLLATE "C" NOT NULL DEFAULT '{"self_referral":"block","disposable_email":"flag","paid_ad_click":"off","address_burst":"flag","refund_rate":"flag"}';
ALTER TABLE ${s}."clicks" ADD COLUMN "address" text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE ${s}."clicks" ADD COLUMN "device" text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE ${s}."clicks" ADD COLUMN "paidAd" boolean NOT NULL DEFAULT false;
ALTER TABLE ${s}."customers" ADD COLUMN "clickAddress" text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE ${s}."customers" ADD COLUMN "clickDevice" text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE ${s}."customers" ADD COLUMN "clickPaidAd" boolean NOT NULL DEFAULT false;
ALTER TABLE ${s}."customers" ADD COLUMN "clickAddressCount" bigint NOT NULL DEFAULT 0;
CREATE INDEX customers_affiliateId_clickAddress ON ${s}."customers" ("affiliateId", "clickAddress", "createdAt", "id");
ALTER TABLE ${s}."affiliates" ADD COLUMN "portalDevices" text[] NOT NULL DEFAULT '{}';
ALTER TABLE ${s}."affiliates" ADD COLUMN "refundWindow" text[] NOT NULL DEFAULT '{}';`,
    ),
  },
]

export const SCHEMA_VERSION = migrations[migrations.length - 1]!.version

export interface MigrateResult {
  /** Versions this call ran, oldest first. */
  applied: number[]
  /** Whether `contains` has trigram indexes (pg_trgm was available). */
  trigram: boolean
}

/**
 * Brings `schema` to the newest version. Safe when several instances start at once: they queue on
 * one advisory lock, and each finds the versions the others ran already recorded. Each migration
 * runs in its own transaction with its record in the migrations table, so a failure leaves the
 * schema at the last version that finished.
 */
export async function migrate(client: PoolClient, schemaName: string, options: { apply: boolean }): Promise<MigrateResult> {
  const schema = quote(schemaName)
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
  try {
    if (options.apply) {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${schema}.${MIGRATIONS_TABLE} (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      )
    } else {
      // Checking only: a role that may not create schemas can still run on one made for it.
      const table = await client.query('SELECT to_regclass($1) AS "table"', [`${schema}.${MIGRATIONS_TABLE}`])
      if (table.rows[0]?.table == null)
        throw new Error(`postgresStorage: schema ${schemaName} has no ${MIGRATIONS_TABLE} table and migrate is false`)
    }
    const done = await client.query<{ version: number }>(`SELECT version FROM ${schema}.${MIGRATIONS_TABLE} ORDER BY version`)
    const seen = new Set(done.rows.map((row) => row.version))
    const newest = Math.max(0, ...seen)
    if (newest > SCHEMA_VERSION) {
      throw new Error(
        `postgresStorage: schema ${schemaName} is at version ${newest}, newer than this affiliate-service knows (${SCHEMA_VERSION}): upgrade the package`,
      )
    }
    const pending = migrations.filter((migration) => !seen.has(migration.version))
    if (pending.length > 0 && !options.apply) {
      throw new Error(
        `postgresStorage: schema ${schemaName} lacks migrations ${pending.map((m) => m.version).join(', ')} and migrate is false`,
      )
    }
    const applied: number[] = []
    for (const migration of pending) {
      await client.query('BEGIN')
      try {
        await migration.up(client, schema)
        await client.query(`INSERT INTO ${schema}.${MIGRATIONS_TABLE} (version, description) VALUES ($1, $2)`, [
          migration.version,
          migration.description,
        ])
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined)
        throw new Error(`postgresStorage: migration ${migration.version} (${migration.description}) failed: ${String(error)}`, {
          cause: error,
        })
      }
      applied.push(migration.version)
    }
    await checkColumns(client, schemaName)
    const trigram = await client.query("SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE '%\\_search\\_trgm'", [
      schemaName,
    ])
    return { applied, trigram: (trigram.rowCount ?? 0) > 0 }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK])
  }
}

/** Fails at start, with a plain message, when a table lacks a column the models need. */
async function checkColumns(client: PoolClient, schemaName: string): Promise<void> {
  const found = await client.query<{ table: string; column: string }>(
    'SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns WHERE table_schema = $1',
    [schemaName],
  )
  const present = new Set(found.rows.map((row) => `${row.table}.${row.column}`))
  for (const model of modelNames) {
    const missing = [...models[model].fields.map((field) => field.name), SEARCH_COLUMN].filter((field) => !present.has(`${model}.${field}`))
    if (missing.length) {
      throw new Error(
        `postgresStorage: table ${schemaName}.${model} lacks ${missing.join(', ')}: a migration is missing for this model change`,
      )
    }
  }
}
