import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DataDirError, DataDirLockedError, lockDataDir, lockFilePath } from './lock'

const root = mkdtempSync(join(tmpdir(), 'shortlink-lock-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

test('one lock per data dir, even within one process; a clean unlock removes the pid file and frees it', () => {
  const dir = join(root, 'one')
  const unlock = lockDataDir(dir)
  expect(readFileSync(lockFilePath(dir), 'utf8')).toBe(String(process.pid))
  expect(() => lockDataDir(dir)).toThrow(new DataDirLockedError(`another shortlink server (pid ${process.pid}) is using ${dir}; stop it first`))
  unlock()
  expect(existsSync(lockFilePath(dir))).toBe(false)
  lockDataDir(dir)()
})

test('a pid file nobody holds (its server was killed) is taken over, whatever pid it names', () => {
  const dir = join(root, 'stale')
  lockDataDir(dir)()
  writeFileSync(lockFilePath(dir), String(process.pid)) // a live pid, but no lock
  const unlock = lockDataDir(dir)
  expect(readFileSync(lockFilePath(dir), 'utf8')).toBe(String(process.pid))
  unlock()
})

test('a data dir that is a file, or under one, is refused with a sentence naming it', () => {
  const file = join(root, 'a-file')
  writeFileSync(file, '')
  expect(() => lockDataDir(file)).toThrow(new DataDirError(`the data dir ${file} is a file, not a directory (server.dataDir)`))
  expect(() => lockDataDir(join(file, 'data'))).toThrow(
    new DataDirError(`cannot use the data dir ${join(file, 'data')}: a part of the path is a file, not a directory`),
  )
})

/** Two processes that try to lock `dir` at the same instant: what each printed. */
async function race(dir: string): Promise<{ outcomes: string[]; kill(): Promise<void> }> {
  const procs = [0, 1].map(() =>
    Bun.spawn([process.execPath, join(import.meta.dir, 'lock.test-fixtures.ts'), dir], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' }),
  )
  const readers = procs.map((p) => (p.stdout as ReadableStream<Uint8Array>).getReader())
  const lines = procs.map(() => '')
  const nextLine = async (i: number) => {
    while (!lines[i]!.includes('\n')) {
      const { value, done } = await readers[i]!.read()
      if (done) throw new Error(`fixture ${i} ended without a line`)
      lines[i] += new TextDecoder().decode(value)
    }
    const at = lines[i]!.indexOf('\n')
    const line = lines[i]!.slice(0, at)
    lines[i] = lines[i]!.slice(at + 1)
    return line
  }
  expect(await Promise.all([nextLine(0), nextLine(1)])).toEqual(['ready', 'ready'])
  const at = String(Date.now() + 40)
  for (const p of procs) {
    p.stdin.write(`${at}\n`)
    await p.stdin.flush()
  }
  const outcomes = await Promise.all([nextLine(0), nextLine(1)])
  return {
    outcomes,
    async kill() {
      for (const p of procs) p.kill('SIGKILL') // as kill -9 does: the pid file stays behind
      await Promise.all(procs.map((p) => p.exited))
    },
  }
}

test('of two processes locking one data dir at the same instant, exactly one wins, round after round, over the pid file a kill -9 left', async () => {
  const dir = join(root, 'race')
  const rounds = 60
  let staleFiles = 0
  for (let round = 0; round < rounds; round++) {
    if (existsSync(lockFilePath(dir))) staleFiles++
    const { outcomes, kill } = await race(dir)
    await kill()
    expect(outcomes.filter((o) => o === 'locked')).toHaveLength(1)
    expect(outcomes.filter((o) => o.startsWith('refused another shortlink server'))).toHaveLength(1)
  }
  // Every round after the first started over the file its killed winner left.
  expect(staleFiles).toBe(rounds - 1)
})
