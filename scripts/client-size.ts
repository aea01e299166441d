// Prints the size of `affiliate-service/client` bundled for a browser (minified, gzipped) from the
// built package, and fails above the budget: the client carries route metadata only, no validators.
// Run after `npm run build` (npm test does: it is part of `check:package`).
import { build } from 'esbuild'
import { gzipSync } from 'node:zlib'

const BUDGET = 6 * 1024
const entry = new URL('../dist/client/index.js', import.meta.url).pathname
const result = await build({
  entryPoints: [entry],
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  write: false,
  logLevel: 'warning',
})
const bytes = result.outputFiles[0]!.contents
const gzipped = gzipSync(bytes, { level: 9 }).length
console.log(
  `affiliate-service/client for a browser: ${(bytes.length / 1024).toFixed(1)} KiB minified, ${(gzipped / 1024).toFixed(1)} KiB gzipped (budget ${BUDGET / 1024} KiB)`,
)
if (gzipped > BUDGET) {
  console.error('the client is over its budget: does it import a validator or server code?')
  process.exit(1)
}
