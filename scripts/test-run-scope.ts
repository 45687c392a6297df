/**
 * Preloaded by every `bun test` in this repository (bunfig.toml [test] preload): one temp
 * folder per run, and nothing left behind when the run ends, however it ends
 * (test/helpers/cleanup.ts). TMPDIR points at the run's folder, so every temp folder the tests
 * and the servers, browsers and fixtures they start make is inside it; at the end the processes
 * the run left are killed, registered mounts and PostgreSQL clusters go, then the folder.
 */
import { afterAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { endRun, endRunSync } from '../test/helpers/cleanup'

const runDir = mkdtempSync(join(tmpdir(), 'shortlink-test-run-'))
process.env.TMPDIR = runDir
const removeRunDir = () => rmSync(runDir, { recursive: true, force: true })

afterAll(async () => {
  const left = await endRun()
  removeRunDir()
  if (left.length) process.stderr.write(`test run: cleaned up what tests left behind:\n${left.map((l) => `  ${l}\n`).join('')}`)
})
// A run cut short (a crash, process.exit, Ctrl-C) cleans up too, without waiting on anything.
process.on('exit', () => {
  endRunSync()
  removeRunDir()
})
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const)
  process.on(signal, () => process.exit(code))
