import { defineConfig } from 'vitest/config'

// .ci/run sets VITEST_JSON to a path and reads the counts from the JSON reporter's file there.
const json = process.env.VITEST_JSON

// Two projects. `fast` is what runs in this process: unit, property, the API over service.fetch,
// the adapters on loopback, the storages in memory and sql.js, the package's in-process checks
// (`npm test`, a few minutes). `slow` is the rest, which starts processes, browsers or needs
// services: npm start and the examples, Bun and Deno, kill -9 crash tests, several instances,
// PostgreSQL, Redis, Chromium, the packed tarball and the bench peers (`npm run test:all`, which
// runs both). A new file falls in `fast` unless it matches a pattern below.
const SLOW = [
  'test/e2e/**/*.test.ts',
  'test/programs/**/*.test.ts',
  'test/crash/**/*.test.ts',
  'test/concurrency/*-postgres-*.test.ts',
  'test/concurrency/postgres-*.test.ts',
  'test/concurrency/*multi-instance*.test.ts',
  'test/**/*postgres*.test.ts',
  'test/**/*redis*.test.ts',
  'test/storage/sqljs-file.test.ts',
  'test/storage/sqljs-lazy.test.ts',
  'test/package/package.test.ts',
  'test/package/bench-*.test.ts',
]

export default defineConfig({
  test: {
    testTimeout: 20_000,
    reporters: json ? ['default', 'json'] : ['default'],
    ...(json ? { outputFile: { json } } : {}),
    projects: [
      { extends: true, test: { name: 'fast', include: ['test/**/*.test.ts'], exclude: SLOW } },
      { extends: true, test: { name: 'slow', include: SLOW } },
    ],
  },
})
