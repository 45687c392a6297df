/**
 * A lock holder in its own process, so a test can kill it (a crashed node) or freeze it
 * with SIGSTOP (a node paused longer than its lease). Usage:
 *   bun lease-lock.test-fixtures.ts <postgres-url> <key> <leaseMs>
 * Prints `acquired <holder>` once it holds the lock; when the lock is lost it prints
 * `lost <message>`, releases (as an ACME order that stops would) and prints `released <true|false>`.
 */
import { SQL } from 'bun'
import { createLeaseLocks } from './lease-lock'

const [url, key, leaseMs] = process.argv.slice(2)
const sql = new SQL(url!, { max: 1 })
const locks = createLeaseLocks(sql, { holder: 'fixture', leaseMs: Number(leaseMs), waitMs: 30_000, pollMs: 20 })
const lock = await locks.acquire(key!)
console.log(`acquired ${lock.holder}`)
lock.lost.addEventListener('abort', async () => {
  console.log(`lost ${(lock.lost.reason as Error).message}`)
  console.log(`released ${await lock.release()}`)
  await sql.close()
  process.exit(0)
})
