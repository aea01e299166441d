import { bytesToHex } from '@noble/hashes/utils'
import { isoAt, type Clock } from '../clock.js'
import type { Storage } from '../storage/types.js'

/** The `settings` record holding the secret the daily click salts derive from. */
export const CLICK_SALT_SETTING = 'clickSalt'

const read = (storage: Storage) => storage.transaction((tx) => tx.get('settings', CLICK_SALT_SETTING), { readOnly: true })

/**
 * The storage's click-salt secret: 32 random bytes made on first use and kept in the storage, so
 * every instance sharing it, and every restart, hashes a visitor alike. Two instances making it at
 * once: one insert wins, the other reads the winner's.
 */
export async function storedSecret(storage: Storage, clock: Clock): Promise<string> {
  const found = await read(storage)
  if (found) return found.value
  const value = bytesToHex(crypto.getRandomValues(new Uint8Array(32)))
  try {
    await storage.transaction(async (tx) => {
      if (await tx.get('settings', CLICK_SALT_SETTING)) return
      const now = isoAt(clock)
      await tx.insert('settings', { id: CLICK_SALT_SETTING, value, createdAt: now, updatedAt: now })
    })
  } catch (error) {
    // Another instance inserted it between our read and our insert: theirs is the secret.
    const winner = await read(storage)
    if (winner) return winner.value
    throw error
  }
  return (await read(storage))!.value
}
