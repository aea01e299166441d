// The few Deno globals server.ts uses, so the repository's Node-typed `tsc` can check it too. Deno has its own.
declare namespace Deno {
  const env: { get(name: string): string | undefined }
  function addSignalListener(signal: 'SIGINT' | 'SIGTERM', handler: () => void): void
  function exit(code?: number): never
}
