/**
 * What a test run leaves behind is removed when the run ends, however it ends: tests that
 * fail or time out, a file whose afterAll never ran, Ctrl-C. scripts/test-run-scope.ts (a
 * preload of every `bun test`) points TMPDIR at one folder per run, so every temp folder a
 * test or a server it starts makes lands there, and at the end calls `endRun`:
 * - the run's processes: every process descended from this one (servers, pebble, Chromium,
 *   fixtures) is killed by its id;
 * - what lives outside the run's folder or outside the process tree, registered here: mounts
 *   (unmounted), PostgreSQL clusters (pg_ctl daemonises them: stopped and removed), other folders;
 * - then the run's folder.
 * What had to be cleaned up this way is named in a warning: a test that stops its own leaves nothing.
 * Helpers register as they start things; nothing here needs bun:test, so scripts may import it.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs'

interface Cleanup {
  name: string
  /** The orderly way, when there is time (the end of a run). */
  async?: () => Promise<void>
  /** The way that works inside an `exit` handler (no promises). */
  sync: () => void
}

const cleanups = new Map<number, Cleanup>()
let nextId = 1

/** Registers `cleanup` for the end of the run; the answer unregisters it (the test cleaned up itself). */
export function atRunEnd(cleanup: Cleanup): () => void {
  const id = nextId++
  cleanups.set(id, cleanup)
  return () => cleanups.delete(id)
}

/** `path` (a folder outside the run's TMPDIR, or a mount point inside it) is removed at the end of the run. */
export function removeAtRunEnd(path: string): () => void {
  return atRunEnd({ name: `folder ${path}`, sync: () => rmSync(path, { recursive: true, force: true }) })
}

/** Pids of the live processes descended from `root` (children first), read from /proc. */
export function descendants(root = process.pid): number[] {
  const children = new Map<number, number[]>()
  let entries: string[] = []
  try {
    entries = readdirSync('/proc')
  } catch {
    return []
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (fields[0] === 'Z') continue // a zombie: already dead, waiting to be reaped
      const ppid = Number(fields[1])
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
    } catch {} // ended while we looked
  }
  const out: number[] = []
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      walk(child)
      out.push(child)
    }
  }
  walk(root)
  return out
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(0, 3).join(' ').slice(0, 120)
  } catch {
    return '?'
  }
}

/** Kills what the run left running; answers what that was, for a warning. */
function killDescendants(): string[] {
  const left = descendants().map((pid) => ({ pid, command: commandOf(pid) }))
  for (const { pid } of left) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {} // gone meanwhile
  }
  return left.map((p) => `pid ${p.pid}: ${p.command}`)
}

/**
 * The end of a run, with time to wait: leftover processes first (a server may hold a mount or a
 * folder), then the registered cleanups, each the orderly way when it has one. Answers what was left.
 */
export async function endRun(): Promise<string[]> {
  const left = killDescendants()
  for (const [id, c] of [...cleanups].reverse()) {
    cleanups.delete(id)
    left.push(c.name)
    try {
      if (c.async) await c.async()
      else c.sync()
    } catch {
      try {
        c.sync()
      } catch {}
    }
  }
  return left
}

/** The same inside an `exit` or signal handler, where nothing can be awaited. */
export function endRunSync(): void {
  killDescendants()
  for (const [id, c] of [...cleanups].reverse()) {
    cleanups.delete(id)
    try {
      c.sync()
    } catch {}
  }
}
