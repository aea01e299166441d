// The SQL that rolls up records written before rollups existed, for the migrations that add them
// (sql.js 7, PostgreSQL 5). Frozen with those migrations: never change it, write a new migration.
// It counts what `rollup.ts` counts, where it counts it:
// - commissions in the hour of `commissionDate`; signups in the hour of the earliest record of each
//   (affiliate, e-mail); paid payouts in the hour of `paidAt`;
// - opens and clicks tracked before then have no time of their own: each affiliate's totals count in
//   the hour the affiliate was created.
// Timestamps are the service's ISO text (`2026-03-29T01:23:45.678Z`): the hour is its first 13 characters.

const COUNTERS = [
  'opens',
  'clicks',
  'signups',
  'saleCount',
  'earningsMinor',
  'pendingCount',
  'pendingMinor',
  'processingCount',
  'processingMinor',
  'paidCount',
  'paidMinor',
  'refundedCount',
  'refundedMinor',
  'clawbackCount',
  'clawbackMinor',
  'payoutCount',
  'paidOutMinor',
] as const

const q = (name: string) => `"${name}"`
const hour = (column: string) => `substr(${column}, 1, 13) || ':00:00.000Z'`

/** Each counter's value in one fact row, 0 unless given. */
const figures = (given: Partial<Record<(typeof COUNTERS)[number], string>>) =>
  COUNTERS.map((counter) => `${given[counter] ?? '0'} AS ${q(counter)}`).join(', ')

const byStatus = (status: string) => ({
  [`${status}Count`]: `CASE WHEN "kind" = 'sale' AND "status" = '${status}' THEN 1 ELSE 0 END`,
  [`${status}Minor`]: `CASE WHEN "kind" = 'sale' AND "status" = '${status}' THEN "amountMinor" ELSE 0 END`,
})

/**
 * Statements that fill `rollups` from the other tables. `t(name)` names a table (schema-qualified
 * for PostgreSQL). The temporary table `_rollup_facts` is made and dropped.
 */
export function rollupBackfillSql(t: (name: string) => string): string {
  const facts = [
    `SELECT "workspaceId" AS w, "campaignId" AS c, "affiliateId" AS a, ${hour('"commissionDate"')} AS h, ${figures({
      saleCount: `CASE WHEN "kind" = 'sale' THEN 1 ELSE 0 END`,
      earningsMinor: `CASE WHEN "kind" = 'sale' AND "status" <> 'refunded' THEN "amountMinor" - "refundedMinor" ELSE 0 END`,
      ...byStatus('pending'),
      ...byStatus('processing'),
      ...byStatus('paid'),
      ...byStatus('refunded'),
      clawbackCount: `CASE WHEN "kind" = 'clawback' THEN 1 ELSE 0 END`,
      clawbackMinor: `CASE WHEN "kind" = 'clawback' THEN "amountMinor" ELSE 0 END`,
    })} FROM ${t('commissions')}`,
    `SELECT min("workspaceId"), min("campaignId"), "affiliateId", ${hour('min("commissionDate")')}, ${figures({ signups: '1' })} FROM ${t('commissions')} GROUP BY "affiliateId", "referredUserKey"`,
    `SELECT "workspaceId", "campaignId", "id", ${hour('"createdAt"')}, ${figures({ opens: '"totalOpens"', clicks: '"totalClicks"' })} FROM ${t('affiliates')} WHERE "totalOpens" <> 0 OR "totalClicks" <> 0`,
    `SELECT "workspaceId", "campaignId", "affiliateId", ${hour('"paidAt"')}, ${figures({ payoutCount: '1', paidOutMinor: '"amountMinor"' })} FROM ${t('payouts')} WHERE "status" = 'paid'`,
  ]
  const sums = COUNTERS.map((counter) => `sum(${q(counter)})`).join(', ')
  const columns = [
    'id',
    'workspaceId',
    'campaignId',
    'affiliateId',
    'hourStart',
    'seriesKey',
    'rankKey',
    ...COUNTERS,
    'createdAt',
    '_search',
  ]
  // Hour rows: id `prefix|hour`, seriesKey `prefix|day`; day rows: id `prefix|day`, seriesKey `prefix|month`.
  const hours = (prefix: string, campaign: string, affiliate: string, rank: boolean, groupBy: string) =>
    `INSERT INTO ${t('rollups')} (${columns.map(q).join(', ')})
SELECT ${prefix} || '|' || h, w, ${campaign}, ${affiliate}, h, ${prefix} || '|' || substr(h, 1, 10), ${rank ? `w || '|' || substr(h, 1, 10)` : 'NULL'}, ${sums}, h, ''
FROM _rollup_facts GROUP BY ${groupBy}, h;`
  const days = (prefix: string, campaign: string, affiliate: string, rank: boolean, groupBy: string) =>
    `INSERT INTO ${t('rollups')} (${columns.map(q).join(', ')})
SELECT ${prefix} || '|' || d, w, ${campaign}, ${affiliate}, d || 'T00:00:00.000Z', ${prefix} || '|' || substr(d, 1, 7), ${rank ? `w || '|' || substr(d, 1, 7)` : 'NULL'}, ${sums}, d || 'T00:00:00.000Z', ''
FROM _rollup_facts GROUP BY ${groupBy}, d;`
  const levels: readonly (readonly [string, string, string, boolean, string])[] = [
    [`w || '|*|' || a`, 'min(c)', 'a', true, 'w, a'],
    [`w || '|' || c || '|*'`, 'c', `''`, false, 'w, c'],
    [`w || '|*|*'`, `''`, `''`, false, 'w'],
  ]
  return [
    `CREATE TEMP TABLE _rollup_facts AS SELECT f.*, substr(f.h, 1, 10) AS d FROM (${facts.join('\nUNION ALL ')}) f;`,
    ...levels.map((level) => hours(...level)),
    ...levels.map((level) => days(...level)),
    'DROP TABLE _rollup_facts;',
  ].join('\n')
}
