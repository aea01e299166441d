// `affiliate-service payouts run`: a payout run from a scheduler (cron, a CI job), on the database
// the environment names, as `POST /payouts/run` does it.
import { parseArgs } from 'node:util'
import { AffiliateError, createAffiliateService, isUuid, memoryKeyStore, type PayoutRunResult } from '../src/index.js'
import { fail, openCommandStorage } from './env.js'

export const PAYOUTS_USAGE = `Usage: affiliate-service payouts run [options]

  Groups every due commission (pending, dueAt <= as-of, in no payout) into one payout per
  affiliate, and prints them and the affiliates left out (below_minimum, not_positive,
  no_payout_details, banned). Safe to run from several machines at once.

  --workspace <uuid>  only this workspace (default: every workspace with campaigns)
  --campaign <uuid>   only this campaign
  --as-of <ISO time>  commissions due by then (default: now; never in the future)
  --dry-run           print what would be made; write nothing
  --json              print the answers as JSON, one line per workspace
  --db <path>         the embedded database file (default: AFFILIATE_DB, else ./data/affiliate.sqlite)

With DATABASE_URL set, the run is on PostgreSQL (schema AFFILIATE_SCHEMA). With the file database
the server holds a lock: stop it first, or call POST /payouts/run on the running server instead.`

/** One workspace's run as lines for people. */
function describeRun(workspaceId: string, result: PayoutRunResult, dryRun: boolean): string[] {
  const lines = [
    `workspace ${workspaceId}: ${result.payouts.length} payout${result.payouts.length === 1 ? '' : 's'}${dryRun ? ' would be made (dry run)' : ' made'}`,
  ]
  for (const p of result.payouts)
    lines.push(`  ${p.payoutId}  ${p.amount} ${p.currency}  ${p.payoutMethod} ${p.payoutEmail}  (${p.commissionCount} commissions)`)
  for (const s of result.skipped) lines.push(`  skipped ${s.affiliateId}  ${s.amount}  ${s.reason}`)
  return lines
}

export async function payoutsCommand(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      workspace: { type: 'string' },
      campaign: { type: 'string' },
      'as-of': { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const [command] = positionals
  if (values.help || !command) {
    console.log(PAYOUTS_USAGE)
    return
  }
  if (command !== 'run' || positionals.length > 1) fail(`unknown payouts command ${positionals.join(' ')}\n\n${PAYOUTS_USAGE}`)
  for (const id of [values.workspace, values.campaign]) if (id !== undefined && !isUuid(id)) fail(`${id} is not a UUID`)
  const { storage, where } = await openCommandStorage(values.db, env)
  try {
    // The command acts as the host itself: every workspace, no key.
    const service = createAffiliateService({ storage, keyStore: memoryKeyStore([]) })
    const workspaces = values.workspace
      ? [values.workspace.toLowerCase()]
      : [...new Set((await storage.transaction((tx) => tx.find('campaigns', {}), { readOnly: true })).map((c) => c.workspaceId))].sort()
    if (workspaces.length === 0 && !values.json) console.log(`No campaigns in ${where}: nothing to pay.`)
    for (const workspaceId of workspaces) {
      const result = await service.api.payouts.run({
        workspaceId,
        ...(values.campaign ? { campaignId: values.campaign } : {}),
        ...(values['as-of'] ? { asOf: values['as-of'] } : {}),
        ...(values['dry-run'] ? { dryRun: true } : {}),
      })
      console.log(
        values.json ? JSON.stringify({ workspaceId, ...result }) : describeRun(workspaceId, result, values['dry-run'] === true).join('\n'),
      )
    }
  } catch (error) {
    if (error instanceof AffiliateError) {
      const details = error.errors?.map((e) => `\n  ${e.msg}`).join('') ?? ''
      fail(`${error.message}${details}`)
    }
    throw error
  } finally {
    await storage.close()
  }
}
