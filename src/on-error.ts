// The one error channel: every error a host should see, whatever raised it, goes to the service's
// `onError(error, context)`; `context.source` says where it came from. The default below is the
// only place in the library that writes to the console.

import type { AffiliateEvent } from './events/types.js'

/**
 * Where an error handed to `onError` came from:
 * - `request`: answering `request` (the answer was a 5xx: 500, or 503 for a provider's event whose
 *   package is not installed; or a streamed file was cut short), or work
 *   that request started (a failing limiter store, click pruning, the portal's `sendSignInLink`).
 *   `request` is the Request as received: its `x-auth-service` header is a key, keep it out of logs.
 * - `listener`: an `events.on` listener threw or rejected on `event` (the write had committed).
 * - `dispatcher`: the background webhook delivery (a storage failure while claiming or recording).
 * - `adapter`: the Node or Express adapter (a `fetch` that threw, a response that could not be
 *   written); `request` when it had been made.
 * - `notify`: the background sending of notifications (a `send` or `render` that failed: the
 *   message is retried with backoff; or a storage failure while claiming or recording).
 * - `storage`: the storage's own background work, e.g. a sql.js file checkpoint that failed (the
 *   journal then keeps every write and grows until a fold succeeds: a full disk, say).
 */
export type ErrorContext =
  | { source: 'request'; request: Request }
  | { source: 'listener'; event: AffiliateEvent }
  | { source: 'dispatcher' }
  | { source: 'adapter'; request?: Request }
  | { source: 'storage' }
  | { source: 'notify' }

/** `ErrorContext['source']`. */
export type ErrorSource = ErrorContext['source']

/** The `onError` option: called with each unexpected error and where it came from. */
export type OnError = (error: unknown, context: ErrorContext) => void

/** Says where an error came from, for a log line: never a header (a request's key stays out). */
function origin(context: ErrorContext): string {
  switch (context.source) {
    case 'request':
      return `request ${context.request.method} ${new URL(context.request.url).pathname}`
    case 'listener':
      return `events.on listener for ${context.event.type}`
    case 'adapter':
      return context.request ? `adapter, ${context.request.method} ${new URL(context.request.url).pathname}` : 'adapter'
    default:
      return context.source
  }
}

/** The default `onError`: one `console.error` per error, saying where it came from. */
export const defaultOnError: OnError = (error, context) => console.error(`affiliate-service: unexpected error (${origin(context)})`, error)

/**
 * `onError` for work nobody awaits (listeners, the dispatcher, storage): a handler that throws
 * itself must not stop that work, and has nowhere else to go but the default.
 */
export function guarded(onError: OnError): OnError {
  return (error, context) => {
    try {
      onError(error, context)
    } catch (thrown) {
      if (onError !== defaultOnError) defaultOnError(thrown, context)
    }
  }
}
