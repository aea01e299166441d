// Which copy of affiliate-service the servers run. In `npm run bench -- peers` and `-- clicks` it is
// the build in dist/ (what a user installs: plain JavaScript, as Hono, Express and better-sqlite3's
// wrapper are), which bench/peers.ts and bench/clicks.ts make first and announce with
// AFFILIATE_BENCH_DIST=1. Elsewhere (the test that every peer answers our
// bytes) it is the TypeScript sources, through tsx.
type Core = typeof import('../../src/index.js')
type Node = typeof import('../../adapters/node.js')
type Postgres = typeof import('../../adapters/postgres.js')

const built = (path: string) => import(new URL(path, import.meta.url).href)

export async function library(): Promise<{ core: Core; node: Node; from: string }> {
  if (process.env.AFFILIATE_BENCH_DIST === '1') {
    return {
      core: (await built('../../dist/index.js')) as Core,
      node: (await built('../../dist/adapters/node.js')) as Node,
      from: 'dist/ (npm run build)',
    }
  }
  return { core: await import('../../src/index.js'), node: await import('../../adapters/node.js'), from: 'the TypeScript sources (tsx)' }
}

/** The PostgreSQL entry point, from the same copy as `library()`. */
export async function postgresLibrary(): Promise<Postgres> {
  if (process.env.AFFILIATE_BENCH_DIST === '1') return (await built('../../dist/adapters/postgres.js')) as Postgres
  return import('../../adapters/postgres.js')
}
