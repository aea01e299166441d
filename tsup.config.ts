import { defineConfig } from 'tsup'

/** The output format (esm, cjs) each esbuild run is for: tsup tells `esbuildOptions`, not the plugins. */
const formats = new WeakMap<object, string>()

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
  // superstruct has no `exports` map, so Node's `import` takes its `main`, the CommonJS build, and
  // the first CommonJS module an ES module imports starts Node's CommonJS export lexer: about 15 ms
  // of a cold start (BENCHMARKS.md row 15). The ES module build imports superstruct's own ES module
  // file instead, as bundlers do (its `module` field); the CommonJS build requires `main`. It stays
  // external either way (`noExternal` only lets this plugin resolve it before tsup's own does).
  noExternal: ['superstruct'],
  esbuildOptions(options, { format }) {
    formats.set(options, format)
  },
  esbuildPlugins: [
    {
      name: 'superstruct-module',
      setup(build) {
        const path = formats.get(build.initialOptions) === 'esm' ? 'superstruct/dist/index.mjs' : 'superstruct'
        build.onResolve({ filter: /^superstruct$/ }, () => ({ path, external: true }))
      },
    },
  ],
})
