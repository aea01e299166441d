// `npm start`: see bin/server.ts for what it reads from the environment.
import { startServer } from './server.js'

startServer().catch((error: unknown) => {
  console.error('affiliate-service: could not start', error)
  process.exit(1)
})
