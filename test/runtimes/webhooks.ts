// The core webhook modules under another runtime: makes a secret, signs a body with it and the
// secret from WEBHOOK_SECRET, plans a retry and checks an address, then prints one JSON line the
// test verifies with standardwebhooks on Node.
import { checkWebhookUrl, forbiddenAddressReason } from '../../src/webhooks/address.js'
import { buildWebhookRequest } from '../../src/webhooks/delivery.js'
import { planAfterAttempt } from '../../src/webhooks/schedule.js'
import { generateWebhookSecret, liveSecrets, rotateWebhookSecret } from '../../src/webhooks/secrets.js'

const env = (name: string) =>
  (globalThis as { process?: { env: Record<string, string> } }).process?.env[name] ??
  (globalThis as { Deno?: { env: { get(n: string): string } } }).Deno!.env.get(name)

const now = Date.now()
const old = env('WEBHOOK_SECRET')
const rotated = rotateWebhookSecret({ secret: old }, now, 24, generateWebhookSecret())
const event = {
  id: crypto.randomUUID(),
  type: 'webhook.test',
  createdAt: new Date(now).toISOString(),
  workspaceId: 'ws_1',
  sequence: 1,
  data: { runtime: env('RUNTIME_NAME') },
}
const request = buildWebhookRequest(event, 'https://hooks.example.com/in', liveSecrets(rotated, now), now)
let refused = ''
try {
  checkWebhookUrl('https://169.254.169.254/')
} catch (error) {
  refused = (error as Error).message
}
console.log(
  `webhooks ${JSON.stringify({
    newSecret: rotated.secret,
    body: request.body,
    headers: request.headers,
    plan: planAfterAttempt(1, 'retryable', now, () => 0.5),
    now,
    loopback: forbiddenAddressReason('::ffff:127.0.0.1'),
    refused,
  })}`,
)
