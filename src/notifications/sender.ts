// The background sending of notifications: claims due ones from the outbox, decides each (the
// owners' and the affiliate's choices, the daily digest), renders it, sends it through
// `notify.send`, and records the outcome. Safe with several instances on one PostgreSQL, as the
// webhook dispatcher is: a claim is one guarded `updateMany` (still pending, still due) that moves
// `nextAttemptAt` to the end of a lease and stamps a claim token, so one instance takes each
// notification; the outcome is written only while the token still matches. A failed `send` is
// retried with backoff and reported to `onError`; it never touches the change that caused it.
// A process that dies between `send` and recording its outcome sends that message again after the
// lease (it cannot know whether the mailer took it): the `Message-ID` stays the same, so mail
// systems can tell the two apart.

import { isoAt, type Clock } from '../clock.js'
import { newId } from '../crypto.js'
import { formatMoney } from '../domain/money.js'
import type { NotificationRecord } from '../domain/records.js'
import { moneyText } from '../site/money.js'
import type { Storage, StorageTransaction } from '../storage/types.js'
import { KINDS, isNotificationKind, type NotificationKind } from './kinds.js'
import type { NotificationData, NotificationMessage, ResolvedNotifyOptions } from './options.js'
import { writeNotice } from './outbox.js'
import { affiliateTakes, campaignSends, preferenceOf, storedOwners } from './preferences.js'
import { renderDefault } from './texts.js'
import { unsubscribeUrl } from './unsubscribe.js'
import { PollingWorker } from '../events/polling-loop.js'

/** Waits before each retry, in ms: 1 min, 5 min, 30 min, 2 h, 6 h, 12 h; then the notification is `dead`. */
export const RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000] as const
/** Sent and final notifications are deleted after this many days (an unsubscribe link then expires). */
const RETENTION_DAYS = 90

/** Where links point: the portal's public origin and paths, and the key that signs unsubscribe links. */
export interface NotificationLinks {
  publicUrl: string
  portalPath: string
  adminPath: string | null
  key: Uint8Array
}

export interface NotificationSenderOptions {
  storage: Storage
  clock: Clock
  notify: ResolvedNotifyOptions
  links: NotificationLinks | null
  onError: (error: unknown) => void
  /** Notifications claimed per transaction. @default 50 */
  batchSize?: number
  /** How long a claim holds a notification. @default 120000 */
  leaseMs?: number
  /** How long one `send` may take before the attempt counts as failed (less than the lease). @default 60000 */
  sendTimeoutMs?: number
}

type Decision =
  | { kind: 'skip'; reason: string }
  | { kind: 'failed'; error: unknown }
  | { kind: 'digest'; affiliateId: string; item: Record<string, unknown> }
  | { kind: 'send'; message: NotificationMessage }

type Outcome = Decision | { kind: 'sent' }

const iso = (ms: number) => new Date(ms).toISOString()
/** The end of the UTC day holding `ms`: when that day's digest goes. */
const endOfDay = (ms: number) => iso(Math.floor(ms / 86_400_000) * 86_400_000 + 86_400_000)
const money = (minor: number, currency: string) => moneyText(formatMoney(minor), currency, 'symbol')

/** The sender the service owns: `start`/`stop` it, `flush` sends what is due now (tests, cron-style hosts). */
export class NotificationSender extends PollingWorker {
  private readonly batchSize: number
  private readonly leaseMs: number
  private readonly sendTimeoutMs: number

  constructor(private readonly options: NotificationSenderOptions) {
    const batchSize = options.batchSize ?? 50
    super({ batchSize, pollMs: options.notify.pollMs, purgeEveryMs: 3_600_000, now: () => options.clock.now(), onError: options.onError })
    this.batchSize = batchSize
    this.leaseMs = options.leaseMs ?? 120_000
    this.sendTimeoutMs = options.sendTimeoutMs ?? 60_000
  }

  protected batch(): Promise<number> {
    return this.sendBatch()
  }

  /** Sends every notification due now, batch after batch; answers how many were handled. */
  flush(): Promise<number> {
    return this.drain()
  }

  /** Deletes final notifications older than the retention. */
  async purge(): Promise<number> {
    const { storage, clock } = this.options
    this.lastPurge = clock.now()
    const before = iso(clock.now() - RETENTION_DAYS * 86_400_000)
    return storage.transaction((tx) =>
      tx.deleteMany('notifications', { status: { in: ['sent', 'skipped', 'dead', 'digested'] }, updatedAt: { lt: before } }),
    )
  }

  /** Claims one batch, decides and sends each, records the outcomes; answers how many. */
  async sendBatch(): Promise<number> {
    const token = newId()
    const claimed = await this.claim(token)
    if (claimed.length === 0) return 0
    const outcomes: Outcome[] = []
    for (const [, decision] of claimed) {
      if (decision.kind === 'failed') this.options.onError(decision.error)
      if (decision.kind !== 'send') {
        outcomes.push(decision)
        continue
      }
      let timer: ReturnType<typeof setTimeout> | undefined
      try {
        // A mailer that never answers must not hold every other message: past the timeout the attempt failed.
        const timedOut = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`notify.send did not finish within ${this.sendTimeoutMs} ms`)), this.sendTimeoutMs)
        })
        await Promise.race([Promise.resolve().then(() => this.options.notify.send(decision.message)), timedOut])
        outcomes.push({ kind: 'sent' })
      } catch (error) {
        this.options.onError(error)
        outcomes.push({ kind: 'failed', error })
      } finally {
        clearTimeout(timer)
      }
    }
    await this.record(
      token,
      claimed.map(([n]) => n),
      outcomes,
    )
    return claimed.length
  }

  private claim(token: string): Promise<[NotificationRecord, Outcome][]> {
    const { storage, clock } = this.options
    return storage.transaction(async (tx) => {
      const now = clock.now()
      const due = { status: { in: ['pending'] }, nextAttemptAt: { lte: iso(now) } }
      const candidates = await tx.find('notifications', {
        where: due,
        orderBy: { field: 'nextAttemptAt', direction: 'ASC' },
        limit: this.batchSize,
      })
      if (candidates.length === 0) return []
      const taken = await tx.updateMany(
        'notifications',
        { ...due, id: { in: candidates.map((n) => n.id) } },
        { nextAttemptAt: iso(now + this.leaseMs), claimToken: token },
      )
      if (taken === 0) return []
      const out: [NotificationRecord, Outcome][] = []
      for (const candidate of candidates) {
        const n = await tx.get('notifications', candidate.id)
        if (n?.claimToken !== token) continue
        // Storage errors go up (a serialization failure runs the claim again); a `render` that throws is a failed attempt.
        out.push([n, await this.decide(tx, n)])
      }
      return out
    })
  }

  /** What to do with one claimed notification, from the choices and records as they stand now. */
  private async decide(tx: StorageTransaction, n: NotificationRecord): Promise<Decision> {
    const { notify, links } = this.options
    if (!isNotificationKind(n.kind)) return { kind: 'skip', reason: `unknown kind ${n.kind}` }
    const kind: NotificationKind = n.kind
    const data = JSON.parse(n.data) as Record<string, unknown>
    if (n.campaignId !== null && !campaignSends(await preferenceOf(tx, n.campaignId), kind))
      return { kind: 'skip', reason: 'turned off for the campaign' }
    let to: string
    let affiliate: NotificationData['affiliate']
    if (KINDS[kind].to === 'affiliate') {
      const id = n.affiliateId!
      const preference = await preferenceOf(tx, id)
      if (!affiliateTakes(preference, kind)) return { kind: 'skip', reason: 'turned off by the affiliate' }
      const record = await tx.get('affiliates', id)
      // A declined applicant's record is gone: the address is the one the notice kept.
      if (kind === 'affiliate.rejected')
        affiliate = { email: String(data.email), firstName: String(data.firstName ?? ''), lastName: String(data.lastName ?? '') }
      else if (!record) return { kind: 'skip', reason: 'the affiliate no longer exists' }
      else affiliate = { email: record.email, firstName: record.firstName, lastName: record.lastName }
      if (record?.isBanned && kind !== 'clawback.created') return { kind: 'skip', reason: 'the affiliate is banned' }
      if (kind === 'commission.earned' && data.items === undefined && preference?.digest) {
        return {
          kind: 'digest',
          affiliateId: id,
          item: {
            amountMinor: data.amountMinor,
            currency: data.currency,
            commissionDate: data.commissionDate,
            customer: data.customer ?? null,
          },
        }
      }
      to = affiliate.email
    } else {
      const owners = notify.owners ?? (await storedOwners(tx, n.workspaceId))
      if (owners.length === 0) return { kind: 'skip', reason: 'no owner address (notify.owners or Settings → E-mail)' }
      to = owners.join(', ')
      if (kind === 'affiliate.applied')
        affiliate = { email: String(data.email), firstName: String(data.firstName ?? ''), lastName: String(data.lastName ?? '') }
    }
    const programName = notify.programName ?? (await this.defaultProgramName(tx, n.workspaceId, n.campaignId))
    const renderData = this.dataOf(kind, n, data, programName, affiliate)
    const defaults = renderDefault(renderData)
    let custom: Awaited<ReturnType<NonNullable<typeof notify.render>>> = null
    try {
      custom = notify.render ? await notify.render(kind, renderData) : null
    } catch (error) {
      return { kind: 'failed', error }
    }
    const headers: Record<string, string> = {
      'Message-ID': `<${n.id}@${links ? new URL(links.publicUrl).hostname : 'affiliate-service.invalid'}>`,
    }
    if (renderData.unsubscribeUrl) {
      headers['List-Unsubscribe'] = `<${renderData.unsubscribeUrl}>`
      headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click'
    }
    return {
      kind: 'send',
      message: {
        id: n.id,
        kind,
        to,
        ...(notify.from ? { from: notify.from } : {}),
        subject: custom?.subject ?? defaults.subject,
        text: custom?.text ?? defaults.text,
        html: custom?.html ?? defaults.html,
        headers,
      },
    }
  }

  /** The workspace's default campaign's name; without one, the notice's campaign's; else the workspace's first. */
  private async defaultProgramName(tx: StorageTransaction, workspaceId: string, campaignId: string | null): Promise<string> {
    const [byDefault] = await tx.find('campaigns', { where: { workspaceId, isDefault: true }, limit: 1 })
    if (byDefault) return byDefault.campaignName
    const own = campaignId === null ? null : await tx.get('campaigns', campaignId)
    if (own) return own.campaignName
    const [first] = await tx.find('campaigns', { where: { workspaceId }, limit: 1 })
    return first?.campaignName ?? 'affiliate'
  }

  private dataOf(
    kind: NotificationKind,
    n: NotificationRecord,
    data: Record<string, unknown>,
    programName: string,
    affiliate: NotificationData['affiliate'],
  ): NotificationData {
    const { links } = this.options
    const toAffiliate = KINDS[kind].to === 'affiliate'
    const portalUrl = links ? `${links.publicUrl}${links.portalPath}` : null
    let adminUrl: string | null = null
    if (links?.adminPath && !toAffiliate) {
      adminUrl = `${links.publicUrl}${links.adminPath}${kind === 'affiliate.applied' ? '/affiliates?status=pending' : '/settings/integrations'}`
    }
    const out: NotificationData = {
      kind,
      programName,
      ...(affiliate ? { affiliate } : {}),
      portalUrl: toAffiliate ? portalUrl : null,
      adminUrl,
      unsubscribeUrl: toAffiliate && links ? unsubscribeUrl(links.publicUrl, links.portalPath, links.key, n.id) : null,
    }
    if (Array.isArray(data.items)) {
      const items = (data.items as { amountMinor: number; currency: string; commissionDate: string; customer: string | null }[])
        .map((item) => ({ ...item, amount: money(item.amountMinor, item.currency) }))
        // In the order they were earned (their folding order depends on which instance took which).
        .sort((a, b) => a.commissionDate.localeCompare(b.commissionDate) || a.amountMinor - b.amountMinor)
      const totals = new Map<string, number>()
      for (const item of items) totals.set(item.currency, (totals.get(item.currency) ?? 0) + item.amountMinor)
      out.items = items
      out.day = n.createdAt.slice(0, 10)
      out.amount = [...totals].map(([currency, minor]) => money(minor, currency)).join(' + ')
      return out
    }
    if (typeof data.amountMinor === 'number' && typeof data.currency === 'string') {
      out.amountMinor = data.amountMinor
      out.currency = data.currency
      out.amount = money(data.amountMinor, data.currency)
    }
    if ('customer' in data) out.customer = (data.customer as string | null) ?? null
    if (kind === 'payout.paid') {
      out.reference = (data.reference as string | null) ?? null
      out.commissionCount = Number(data.commissionCount ?? 0)
      out.payoutMethod = (data.payoutMethod as string | null) ?? null
      out.payoutEmail = (data.payoutEmail as string | null) ?? null
    }
    if (kind === 'affiliate.applied') out.campaignName = String(data.campaignName ?? '')
    if (kind === 'integration.failing') {
      out.integration = {
        integrationId: String(data.integrationId),
        provider: String(data.provider),
        description: String(data.description ?? ''),
        failures: Number(data.failures),
        since: String(data.since),
      }
    }
    return out
  }

  /** Writes every outcome of a batch in one transaction, each only while its claim still holds. */
  private record(token: string, claimed: NotificationRecord[], outcomes: Outcome[]): Promise<void> {
    const { storage, clock } = this.options
    return storage.transaction(async (tx) => {
      const now = clock.now()
      const stamp = iso(now)
      for (const [i, n] of claimed.entries()) {
        const outcome = outcomes[i]!
        const current = await tx.get('notifications', n.id)
        if (current?.claimToken !== token) continue
        const final = { nextAttemptAt: null, claimToken: null, updatedAt: stamp }
        switch (outcome.kind) {
          case 'sent':
            await tx.update('notifications', n.id, { ...final, status: 'sent', attempts: n.attempts + 1, sentAt: stamp, lastError: null })
            break
          case 'skip':
            await tx.update('notifications', n.id, { ...final, status: 'skipped', lastError: outcome.reason })
            break
          case 'failed':
            await this.failed(tx, n, String(outcome.error), now)
            break
          case 'digest':
            await this.fold(tx, n, outcome.affiliateId, outcome.item, now)
            await tx.update('notifications', n.id, { ...final, status: 'digested' })
            break
          case 'send':
            break
        }
      }
    })
  }

  private async failed(tx: StorageTransaction, n: NotificationRecord, error: string, now: number): Promise<void> {
    const attempts = n.attempts + 1
    const delay = RETRY_DELAYS_MS[attempts - 1]
    await tx.update('notifications', n.id, {
      attempts,
      status: delay === undefined ? 'dead' : 'pending',
      nextAttemptAt: delay === undefined ? null : iso(now + delay),
      claimToken: null,
      lastError: error.slice(0, 1000),
      updatedAt: iso(now),
    })
  }

  /** Adds one commission to the affiliate's digest of today (made when it is the day's first), sent at the day's end. */
  private async fold(
    tx: StorageTransaction,
    n: NotificationRecord,
    affiliateId: string,
    item: Record<string, unknown>,
    now: number,
  ): Promise<void> {
    const day = iso(now).slice(0, 10)
    for (let part = 1; ; part++) {
      const recordId = `digest/${affiliateId}/${day}${part === 1 ? '' : `/${part}`}`
      const [digest] = await tx.find('notifications', { where: { kind: 'commission.earned', recordId }, limit: 1 })
      if (!digest) {
        await writeNotice(
          tx,
          this.options.clock,
          {
            kind: 'commission.earned',
            recordId,
            workspaceId: n.workspaceId,
            campaignId: n.campaignId,
            affiliateId,
            data: { items: [item] },
          },
          endOfDay(now),
        )
        return
      }
      // One already sent or being sent (a clock that moved back): the next part takes it.
      if (digest.status !== 'pending' || digest.claimToken !== null) continue
      const data = JSON.parse(digest.data) as { items: unknown[] }
      await tx.update('notifications', digest.id, {
        data: JSON.stringify({ items: [...data.items, item] }),
        updatedAt: isoAt(this.options.clock),
      })
      return
    }
  }
}
