import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'adapters/node': 'adapters/node.ts',
    'adapters/express': 'adapters/express.ts',
    'adapters/bun': 'adapters/bun.ts',
    'adapters/deno': 'adapters/deno.ts',
    // PostgreSQL storage and Redis limiter store; `pg` and `redis` stay the user's (optional peers).
    'adapters/postgres': 'adapters/postgres.ts',
    'adapters/redis': 'adapters/redis.ts',
    // What a storage implementer needs: records, `models`, `defineStorage`, the driver types.
    'storage/index': 'src/storage/index.ts',
    // The typed HTTP client: fetch only, no storage or server code.
    'client/index': 'src/client/index.ts',
    // What a webhook receiver needs: verifyWebhook and the typed events (standardwebhooks only).
    'webhooks/index': 'src/webhook-receiver/index.ts',
    // The storage conformance kit; imports vitest, which stays the user's (an optional peer).
    'testing/index': 'src/testing/index.ts',
    // The `affiliate-service` command (package.json "bin").
    'bin/cli': 'bin/cli.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  // No maps: the output is not minified, so stack traces read as they are, and maps would ship
  // every source a second time (1.2 MB of the 1.8 MB unpacked).
  sourcemap: false,
  target: 'node20',
  splitting: true,
  treeshake: true,
})
