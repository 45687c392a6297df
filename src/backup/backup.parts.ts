/**
 * What a backup is made of: one part per store of the node, each making a consistent copy of
 * its own data under the staging folder and checking it again after a restore.
 *
 * - records: the SQLite store (links, users, keys, domains, ACME accounts and certificates,
 *   templates, sessions, secrets, the links' click counters) by VACUUM INTO, one read
 *   transaction, in a worker thread; and with it the events store (DuckDB: the click events and
 *   their rollups). A running server copies the events file between two of its click batches
 *   and takes the SQLite copy while its writer waits, so both hold the same batches; with no
 *   server (the data dir locked) the files are copied as they lie.
 * - files: the uploaded files' bytes, content-addressed under files/; hard links taken before
 *   the records' snapshot keep every blob it can name even if the file is deleted meanwhile.
 * - tls: the local CA, the self-signed certificate and their keys (tls/).
 */
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { inspectEventsStore } from '../stats'

export interface SnapshotContext {
  dataDir: string
  /** A fresh folder inside the data dir (same file system: hard links work) for the copies. */
  staging: string
  /** Runs a copy of the records store in the backup worker: VACUUM INTO, then each table's rows counted. */
  vacuumInto(source: string, target: string): Promise<{ tables: Record<string, number>; blobs: string[] }>
  /** Shared between parts of one backup (the blobs the records' snapshot names). */
  shared: { blobs?: string[] }
}

export interface PartSnapshot {
  /** Members by data-dir-relative path, read from `source` (a file under staging). */
  members: { path: string; source: string }[]
  /** Facts recorded in the manifest and checked after a restore (row counts, names). */
  facts: Record<string, unknown>
}

export interface BackupPart {
  name: string
  /** Top-level entries of the data dir this part covers; an entry no part covers is reported, never silently left out. */
  covers: string[]
  /** Runs before any part's snapshot, in order: pins what must not vanish before the snapshots are taken. */
  pin?(ctx: SnapshotContext): void | Promise<void>
  snapshot(ctx: SnapshotContext): Promise<PartSnapshot>
  /** Member paths this part restores (everything else in an archive is refused). */
  claims(path: string): boolean
  /** Problems with the restored data dir `dir` against the facts the backup recorded (empty: verified). */
  verify(dir: string, facts: Record<string, unknown>): string[] | Promise<string[]>
}

/**
 * Entries of a data dir that are never backed up: the lock, the control socket, SQLite's side
 * files, our staging and state, import uploads being read (an import cut short is run again),
 * the click journal (ADR 23: the backup's drain writes what it holds into the store first; rows
 * journaled after that are the running node's, and a restored node must not write them twice),
 * and the DuckDB library a compiled binary writes out at start.
 */
export const NOT_BACKED_UP = new Set([
  'shortlink.pid',
  'shortlink.sock',
  'shortlink.db-wal',
  'shortlink.db-shm',
  'backup-state.json',
  'imports',
  'clicks.journal',
])
export const isScratch = (name: string) => name.startsWith('.backup-') || name.startsWith('.restore-') || /^libduckdb-[0-9.]+\.so$/.test(name)

/** The running server's events store: copies itself between two click batches, running `whilePaused` while its writer waits. */
export interface EventsSnapshotter {
  backup(dest: string, whilePaused?: () => Promise<void> | void): Promise<unknown>
}

const EVENTS = 'events.duckdb'
/** DuckDB's log of an events store a server was killed on: replayed at the next open, so part of the store as it lies. */
const EVENTS_WAL = 'events.duckdb.wal'

const SHA256 = /^[0-9a-f]{64}$/

/** `fn` over the restored store of `dir`, opened read-only. */
function withRestoredStore<T>(dir: string, fn: (db: Database) => T): T {
  const db = new Database(join(dir, 'shortlink.db'), { readonly: true })
  try {
    return fn(db)
  } finally {
    db.close()
  }
}

/** `events`: the running server's events store; absent, no server runs and the files are copied. */
export function recordsPart(events?: EventsSnapshotter): BackupPart {
  return {
    name: 'records',
    covers: ['shortlink.db', EVENTS, EVENTS_WAL],
    async snapshot(ctx) {
      const target = join(ctx.staging, 'shortlink.db')
      const eventsTarget = join(ctx.staging, EVENTS)
      const members = [{ path: 'shortlink.db', source: target }]
      let records: Awaited<ReturnType<SnapshotContext['vacuumInto']>>
      const vacuum = async () => {
        records = await ctx.vacuumInto(join(ctx.dataDir, 'shortlink.db'), target)
      }
      if (events) await events.backup(eventsTarget, vacuum)
      else {
        await vacuum()
        for (const name of [EVENTS, EVENTS_WAL])
          if (existsSync(join(ctx.dataDir, name))) {
            copyFileSync(join(ctx.dataDir, name), join(ctx.staging, name))
            if (name === EVENTS_WAL) members.push({ path: name, source: join(ctx.staging, name) })
          }
      }
      const { tables, blobs } = records!
      ctx.shared.blobs = blobs
      let eventFacts: Awaited<ReturnType<typeof inspectEventsStore>> | null = null
      if (existsSync(eventsTarget)) {
        members.push({ path: EVENTS, source: eventsTarget })
        // A copy with a log beside it is read as it will be restored: opening it replays the log.
        eventFacts = existsSync(join(ctx.staging, EVENTS_WAL)) ? null : await inspectEventsStore(eventsTarget, ctx.dataDir)
      }
      return { members, facts: { tables, events: eventFacts } }
    },
    claims: (path) => path === 'shortlink.db' || path === EVENTS || path === EVENTS_WAL,
    async verify(dir, facts) {
      if (!existsSync(join(dir, 'shortlink.db'))) return ['shortlink.db is missing']
      const problems: string[] = []
      const expected = facts.events as Awaited<ReturnType<typeof inspectEventsStore>> | null | undefined
      if (existsSync(join(dir, EVENTS)) && !existsSync(join(dir, EVENTS_WAL))) {
        try {
          const found = await inspectEventsStore(join(dir, EVENTS), dir)
          if (expected && (found.events !== expected.events || found.clicks !== expected.clicks || found.batch !== expected.batch))
            problems.push(
              `${EVENTS}: ${found.events} events, ${found.clicks} clicks, batch ${found.batch} restored; the backup recorded ${expected.events}, ${expected.clicks}, batch ${expected.batch}`,
            )
        } catch (e) {
          problems.push(`${EVENTS} does not open as an events store: ${(e as Error).message}`)
        }
      } else if (expected) problems.push(`${EVENTS} is missing`)
      return problems.concat(
        withRestoredStore(dir, (db) => {
          const problems: string[] = []
          const check = db.query<{ quick_check: string }, []>('PRAGMA quick_check').all()
          if (check.length !== 1 || check[0]!.quick_check !== 'ok')
            problems.push(`shortlink.db fails SQLite's check: ${check.map((r) => r.quick_check).join('; ')}`)
          const tables = (facts.tables ?? {}) as Record<string, number>
          for (const [table, count] of Object.entries(tables)) {
            const found = (db.query(`SELECT count(*) AS n FROM "${table.replace(/"/g, '""')}"`).get() as { n: number }).n
            if (found !== count) problems.push(`table ${table}: ${found} rows restored, the backup recorded ${count}`)
          }
          return problems
        }),
      )
    },
  }
}

export function filesPart(): BackupPart {
  const linked = (ctx: SnapshotContext) => join(ctx.staging, 'files')
  return {
    name: 'files',
    covers: ['files'],
    pin(ctx) {
      // Before the records' snapshot: every blob a snapshot row may name is held by a link, even if deleted meanwhile.
      const from = join(ctx.dataDir, 'files')
      mkdirSync(linked(ctx), { recursive: true, mode: 0o700 })
      if (!existsSync(from)) return
      for (const name of readdirSync(from)) if (SHA256.test(name)) linkSync(join(from, name), join(linked(ctx), name))
    },
    async snapshot(ctx) {
      const wanted = new Set(ctx.shared.blobs ?? [])
      const missing: string[] = []
      const members: PartSnapshot['members'] = []
      for (const sha of [...wanted].sort()) {
        const at = join(linked(ctx), sha)
        // Uploaded after the links were taken and before the snapshot: linked now.
        if (!existsSync(at) && existsSync(join(ctx.dataDir, 'files', sha))) linkSync(join(ctx.dataDir, 'files', sha), at)
        if (existsSync(at)) members.push({ path: `files/${sha}`, source: at })
        else missing.push(sha)
      }
      return { members, facts: { blobs: members.length, missing } }
    },
    claims: (path) => /^files\/[0-9a-f]{64}$/.test(path),
    verify(dir) {
      if (!existsSync(join(dir, 'shortlink.db'))) return []
      return withRestoredStore(dir, (db) => {
        const rows = db.query<{ sha256: string; size: number }, []>('SELECT DISTINCT sha256, size FROM files WHERE deleted_at IS NULL').all()
        const problems: string[] = []
        for (const r of rows) {
          const blob = join(dir, 'files', r.sha256)
          if (!existsSync(blob)) problems.push(`file bytes ${r.sha256} are missing`)
          else if (statSync(blob).size !== r.size) problems.push(`file bytes ${r.sha256}: ${statSync(blob).size} bytes, the record says ${r.size}`)
        }
        return problems
      })
    },
  }
}

export function tlsPart(): BackupPart {
  return {
    name: 'tls',
    covers: ['tls'],
    async snapshot(ctx) {
      const from = join(ctx.dataDir, 'tls')
      const members: PartSnapshot['members'] = []
      if (existsSync(from)) {
        mkdirSync(join(ctx.staging, 'tls'), { recursive: true, mode: 0o700 })
        for (const name of readdirSync(from).sort()) {
          if (!/^[A-Za-z0-9._-]+$/.test(name) || !statSync(join(from, name)).isFile()) continue
          // Small files rewritten whole when they change: a copy is their snapshot.
          copyFileSync(join(from, name), join(ctx.staging, 'tls', name))
          members.push({ path: `tls/${name}`, source: join(ctx.staging, 'tls', name) })
        }
      }
      return { members, facts: { files: members.map((m) => m.path) } }
    },
    claims: (path) => /^tls\/[A-Za-z0-9._-]+$/.test(path),
    verify(dir, facts) {
      return ((facts.files ?? []) as string[]).filter((p) => !existsSync(join(dir, p))).map((p) => `${p} is missing`)
    },
  }
}

/**
 * The parts of a node on the embedded store, in the order they run. Pins run first, then the
 * snapshots: records before files (files copies what the records' snapshot names).
 */
export function nodeParts(events?: EventsSnapshotter): BackupPart[] {
  return [recordsPart(events), filesPart(), tlsPart()]
}
