/**
 * A process that tries to lock a data dir at a given instant, for the race in lock.test.ts.
 * Usage: bun lock.test-fixtures.ts <dataDir>. Prints `ready`, reads the instant (epoch ms)
 * from stdin, spins until then, tries the lock and prints `locked` or `refused <message>`;
 * a holder keeps the lock until it is killed.
 */
import { DataDirLockedError, lockDataDir } from './lock'

const dataDir = process.argv[2]!
console.log('ready')
const reader = Bun.stdin.stream().getReader()
let line = ''
while (!line.includes('\n')) {
  const { value, done } = await reader.read()
  if (done) process.exit(2)
  line += new TextDecoder().decode(value)
}
const at = Number(line.trim())
while (performance.timeOrigin + performance.now() < at) {}
try {
  lockDataDir(dataDir)
  console.log('locked')
  setInterval(() => {}, 60_000) // hold it until killed
} catch (e) {
  if (!(e instanceof DataDirLockedError)) throw e
  console.log(`refused ${e.message}`)
  process.exit(0)
}
