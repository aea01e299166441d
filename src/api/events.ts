import type { Infer } from 'superstruct'
import { notFound } from '../errors.js'
import { toEvent } from '../events/outbox.js'
import type { AffiliateEvent } from '../events/types.js'
import { eventId, eventList } from '../schemas/webhooks.js'
import { parse } from '../schemas/validate.js'
import { canSee, visible, workspaceScope, type Access } from './access.js'
import { inTransaction, readOnly, type Deps } from './shared.js'

export type EventListQuery = Infer<typeof eventList.struct>

/** A page of events, oldest first: ask again with `after` = the last item's id for the next one. */
export interface EventPage {
  items: AffiliateEvent[]
  /** Whether more events already follow the last item. */
  hasMore: boolean
}

export function eventOperations({ storage }: Deps) {
  return {
    /**
     * Events oldest first (by commit order), of `type` when given, after the event `after` when given
     * (404 when that event is unknown, another workspace's, or past retention), at most `limit` (10).
     */
    async list(access: Access, query: unknown): Promise<EventPage> {
      const q = parse([eventList, query]).query
      const limit = q.limit ?? 10
      return inTransaction(
        storage,
        async (tx) => {
          let sequence: { gt: number } | undefined
          if (q.after !== undefined) {
            const after = await tx.get('events', q.after.toLowerCase())
            if (!after || !canSee(access, after.workspaceId)) throw notFound('Event (after)')
            sequence = { gt: after.sequence }
          }
          const found = await tx.find('events', {
            where: {
              ...workspaceScope(access, q.workspaceId?.toLowerCase()),
              ...(q.type === undefined ? {} : { type: q.type }),
              ...(sequence ? { sequence } : {}),
            },
            orderBy: { field: 'sequence', direction: 'ASC' },
            limit: limit + 1,
          })
          return { items: found.slice(0, limit).map(toEvent), hasMore: found.length > limit }
        },
        readOnly,
      )
    },

    async get(access: Access, query: unknown): Promise<AffiliateEvent> {
      const { eventId: id } = parse([eventId, query]).query
      return inTransaction(storage, async (tx) => toEvent(visible(access, await tx.get('events', id.toLowerCase()), 'Event')), readOnly)
    },
  }
}
