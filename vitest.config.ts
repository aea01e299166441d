import { defineConfig } from 'vitest/config'

// .ci/run sets VITEST_JSON to a path and reads the counts from the JSON reporter's file there.
const json = process.env.VITEST_JSON

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    reporters: json ? ['default', 'json'] : ['default'],
    ...(json ? { outputFile: { json } } : {}),
  },
})
