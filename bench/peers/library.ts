// Which copy of affiliate-service the servers run. In `npm run bench -- peers` it is the build in
// dist/ (what a user installs: plain JavaScript, as Hono and Express are), which bench/peers.ts makes
// first and announces with AFFILIATE_BENCH_DIST=1. Elsewhere (the test that every peer answers our
// bytes) it is the TypeScript sources, through tsx.
type Core = typeof import('../../src/index.js')
type Node = typeof import('../../adapters/node.js')

const built = (path: string) => import(new URL(path, import.meta.url).href)

export async function library(): Promise<{ core: Core; node: Node; from: string }> {
  if (process.env.AFFILIATE_BENCH_DIST === '1') {
    return { core: (await built('../../dist/index.js')) as Core, node: (await built('../../dist/adapters/node.js')) as Node, from: 'dist/ (npm run build)' }
  }
  return { core: await import('../../src/index.js'), node: await import('../../adapters/node.js'), from: 'the TypeScript sources (tsx)' }
}
