import { readFileSync, writeFileSync } from 'node:fs'
import type { InitSqlJs, SqlJsDatabase } from '../../src/storage/sqljs/sql-js-types.js'

// SQL taking a sql.js file back to what an older version wrote, for the tests that upgrade real
// older files. One entry per migration, newest last: a new migration adds its undo here, and every
// rewinding test follows.
const UNDO: Record<number, string> = {
  5: `DROP INDEX commissions_workspaceId_status;
  DROP TRIGGER _counts_commissions_workspaceId_status_insert;
  DROP TRIGGER _counts_commissions_workspaceId_status_delete;
  DROP TRIGGER _counts_commissions_workspaceId_status_update;
  DELETE FROM _counts WHERE field = 'workspaceId,status';`,
  6: `DROP TABLE payouts;
  DELETE FROM _counts WHERE model = 'payouts';
  DROP INDEX commissions_payoutId;
  ALTER TABLE commissions DROP COLUMN kind;
  ALTER TABLE commissions DROP COLUMN dueAt;
  ALTER TABLE commissions DROP COLUMN payoutId;
  ALTER TABLE commissions DROP COLUMN refundedMinor;
  ALTER TABLE commissions DROP COLUMN reversesCommissionId;
  ALTER TABLE campaigns DROP COLUMN currency;
  ALTER TABLE campaigns DROP COLUMN attributionWindowDays;`,
  7: 'DROP TABLE rollups;',
  8: `DROP TABLE clicks;
  DROP TABLE settings;
  ALTER TABLE apiKeys DROP COLUMN kind;
  ALTER TABLE apiKeys DROP COLUMN allowedOrigins;`,
  9: `DROP TABLE portalTokens;
  DELETE FROM _counts WHERE model = 'portalTokens';
  DROP INDEX affiliates_emailKey;`,
  10: 'DROP TABLE events; DROP TABLE webhooks; DROP TABLE webhookDeliveries; DROP TABLE sequences;',
  11: 'CREATE INDEX clicks_created ON clicks (createdAt);',
  12: `DROP TABLE customers;
  DROP TABLE sales;
  DROP TABLE saleRefunds;
  ALTER TABLE campaigns DROP COLUMN recurringMonths;
  ALTER TABLE campaigns DROP COLUMN maxCommissionsPerCustomer;`,
  14: `ALTER TABLE webhooks ADD COLUMN previousSecret TEXT;
  ALTER TABLE webhooks DROP COLUMN previousSecrets;`,
  15: 'ALTER TABLE apiKeys DROP COLUMN lastUsedAt;',
  17: 'DROP TABLE integrations; DROP TABLE providerEvents;',
  18: `DROP INDEX affiliates_workspaceId_totalEarningsMinor;
  DROP INDEX commissions_workspaceId_kind;
  DROP INDEX commissions_workspaceId_commissionDate;`,
  19: `DROP INDEX customers_workspace_stripe;
  CREATE INDEX customers_workspaceId_stripeCustomerId ON customers (workspaceId, stripeCustomerId, createdAt, id);
  ALTER TABLE customers DROP COLUMN attributedAt;
  DROP INDEX sales_workspace_payment_intent;
  DROP INDEX sales_workspaceId_stripeCustomerId;
  ALTER TABLE sales DROP COLUMN paymentIntentId;
  ALTER TABLE sales DROP COLUMN subscriptionId;
  ALTER TABLE sales DROP COLUMN stripeCustomerId;
  DROP INDEX commissions_customerId;
  ALTER TABLE commissions DROP COLUMN saleAmountMinor;
  ALTER TABLE commissions DROP COLUMN currency;
  ALTER TABLE commissions DROP COLUMN customerId;
  ALTER TABLE commissions DROP COLUMN paymentIntentId;
  ALTER TABLE commissions DROP COLUMN holdReasons;
  DROP INDEX providerEvents_workspaceId_invoiceId;
  DROP INDEX providerEvents_workspaceId_chargeId;
  DROP INDEX providerEvents_workspaceId_paymentIntentId;
  ALTER TABLE providerEvents DROP COLUMN invoiceId;
  ALTER TABLE providerEvents DROP COLUMN chargeId;
  ALTER TABLE providerEvents DROP COLUMN paymentIntentId;
  ALTER TABLE providerEvents DROP COLUMN chargedMinor;
  ALTER TABLE providerEvents DROP COLUMN refundedMinor;`,
  20: `DROP TABLE promoCodes;
  ALTER TABLE links DROP COLUMN shareUrl;
  ALTER TABLE campaigns DROP COLUMN beaconInstalled;
  ALTER TABLE integrations DROP COLUMN apiKey;`,
  21: 'ALTER TABLE rollups DROP COLUMN salesMinor;',
  22: 'DROP TABLE adminSessions;',
  23: 'DROP TABLE notifications; DROP TABLE notificationPreferences;',
  24: `ALTER TABLE campaigns DROP COLUMN fraudRules;
  ALTER TABLE rollups DROP COLUMN holdCount;
  ALTER TABLE rollups DROP COLUMN holdMinor;
  ALTER TABLE rollups DROP COLUMN voidedCount;
  ALTER TABLE rollups DROP COLUMN voidedMinor;
  ALTER TABLE clicks DROP COLUMN address;
  ALTER TABLE clicks DROP COLUMN device;
  ALTER TABLE clicks DROP COLUMN paidAd;
  DROP INDEX customers_affiliateId_clickAddress;
  ALTER TABLE customers DROP COLUMN clickAddress;
  ALTER TABLE customers DROP COLUMN clickDevice;
  ALTER TABLE customers DROP COLUMN clickPaidAd;
  ALTER TABLE customers DROP COLUMN clickAddressCount;
  ALTER TABLE affiliates DROP COLUMN portalDevices;
  ALTER TABLE affiliates DROP COLUMN refundWindow;`,
}

/** Undoes every migration after `version` (newest first) and sets `user_version` to it. */
export function rewindTo(version: number): string {
  const undone = Object.keys(UNDO)
    .map(Number)
    .filter((v) => v > version)
    .sort((a, b) => b - a)
    .map((v) => UNDO[v])
  return `${undone.join('\n')}\nPRAGMA user_version = ${version};`
}

/**
 * Takes the sql.js file at `file` (closed) back to what version `version` wrote, in place.
 * `inspect` sees the rewound database before it is written back.
 */
export async function rewindFile(file: string, version: number, inspect?: (db: SqlJsDatabase) => void): Promise<void> {
  const SQL = await ((await import('sql.js' as string)) as { default: InitSqlJs }).default()
  const db = new SQL.Database(readFileSync(file))
  try {
    db.exec(rewindTo(version))
    inspect?.(db)
    writeFileSync(file, db.export())
  } finally {
    db.close()
  }
}
