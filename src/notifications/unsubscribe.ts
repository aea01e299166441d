// The signed one-click unsubscribe link of affiliates' messages: no sign-in, works once, cannot be
// forged. Its token is an HMAC-SHA256 of the notification's id under the portal's secret, so only
// the service can make one; using it stamps the notification (`unsubscribedAt`), so it works once,
// and turns that message's kind off for its affiliate.

import { isoAt, type Clock } from '../clock.js'
import { base64url, constantTimeEqual, hmacSha256 } from '../crypto.js'
import type { Storage } from '../storage/types.js'
import { isUuid } from '../uuid.js'
import { isNotificationKind, type NotificationKind } from './kinds.js'
import { preferenceOf } from './preferences.js'

export const unsubscribeToken = (key: Uint8Array, notificationId: string): string =>
  base64url(hmacSha256(key, `notify-unsubscribe:${notificationId}`))

/** The link, from the portal's public origin alone. */
export const unsubscribeUrl = (publicUrl: string, portalPath: string, key: Uint8Array, notificationId: string): string =>
  `${publicUrl}${portalPath}/unsubscribe?id=${notificationId}&token=${unsubscribeToken(key, notificationId)}`

export type UnsubscribeOutcome = { outcome: 'done' | 'used'; kind: NotificationKind } | { outcome: 'invalid' }

/** Whether `token` is the link's for `id` (before any storage read). */
export const validToken = (key: Uint8Array, id: string, token: string): boolean =>
  isUuid(id) && constantTimeEqual(unsubscribeToken(key, id.toLowerCase()), token)

/** Uses the link: its kind turned off for its affiliate, once. */
export async function unsubscribe(storage: Storage, clock: Clock, key: Uint8Array, id: string, token: string): Promise<UnsubscribeOutcome> {
  if (!validToken(key, id, token)) return { outcome: 'invalid' }
  return storage.transaction(async (tx) => {
    const n = await tx.get('notifications', id.toLowerCase())
    if (!n || n.affiliateId === null || !isNotificationKind(n.kind)) return { outcome: 'invalid' }
    if (n.unsubscribedAt !== null) return { outcome: 'used', kind: n.kind }
    const now = isoAt(clock)
    await tx.update('notifications', n.id, { unsubscribedAt: now, updatedAt: now })
    const p = await preferenceOf(tx, n.affiliateId)
    if (!p) {
      await tx.insert('notificationPreferences', {
        id: n.affiliateId,
        workspaceId: n.workspaceId,
        scope: 'affiliate',
        turnedOff: [n.kind],
        turnedOn: [],
        digest: false,
        createdAt: now,
        updatedAt: now,
      })
    } else if (!p.turnedOff.includes(n.kind)) {
      await tx.update('notificationPreferences', p.id, { turnedOff: [...p.turnedOff, n.kind], updatedAt: now })
    }
    return { outcome: 'done', kind: n.kind }
  })
}
