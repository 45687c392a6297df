/**
 * What a backup is made of: one part per store of the node, each making a consistent copy of
 * its own data under the staging folder and checking it again after a restore.
 *
 * - records: the SQLite store (links, users, keys, domains, ACME accounts and certificates,
 *   templates, sessions, secrets, and today the click events and their rollups) by VACUUM
 *   INTO, one read transaction, in a worker thread.
 * - files: the uploaded files' bytes, content-addressed under files/; hard links taken before
 *   the records' snapshot keep every blob it can name even if the file is deleted meanwhile.
 * - tls: the local CA, the self-signed certificate and their keys (tls/).
 *
 * The events store (DuckDB, once the click events move out of SQLite) adds its part to
 * `nodeParts` below: a snapshot taken by the server's own connection (DuckDB allows one
 * process), its file name in `covers`, and its check in `verify`.
 */
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

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

/** Entries of a data dir that are never backed up: the lock, the control socket, SQLite's side files, our staging and state. */
export const NOT_BACKED_UP = new Set(['shortlink.pid', 'shortlink.sock', 'shortlink.db-wal', 'shortlink.db-shm', 'backup-state.json'])
export const isScratch = (name: string) => name.startsWith('.backup-') || name.startsWith('.restore-')

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

export function recordsPart(): BackupPart {
  return {
    name: 'records',
    covers: ['shortlink.db'],
    async snapshot(ctx) {
      const target = join(ctx.staging, 'shortlink.db')
      const { tables, blobs } = await ctx.vacuumInto(join(ctx.dataDir, 'shortlink.db'), target)
      ctx.shared.blobs = blobs
      return { members: [{ path: 'shortlink.db', source: target }], facts: { tables } }
    },
    claims: (path) => path === 'shortlink.db',
    verify(dir, facts) {
      if (!existsSync(join(dir, 'shortlink.db'))) return ['shortlink.db is missing']
      return withRestoredStore(dir, (db) => {
        const problems: string[] = []
        const check = db.query<{ quick_check: string }, []>('PRAGMA quick_check').all()
        if (check.length !== 1 || check[0]!.quick_check !== 'ok')
          problems.push(`shortlink.db fails SQLite's check: ${check.map((r) => r.quick_check).join('; ')}`)
        const expected = (facts.tables ?? {}) as Record<string, number>
        for (const [table, count] of Object.entries(expected)) {
          const found = (db.query(`SELECT count(*) AS n FROM "${table.replace(/"/g, '""')}"`).get() as { n: number }).n
          if (found !== count) problems.push(`table ${table}: ${found} rows restored, the backup recorded ${count}`)
        }
        return problems
      })
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
export function nodeParts(): BackupPart[] {
  return [recordsPart(), filesPart(), tlsPart()]
}
