/**
 * Imports: an export file on disk → the caller's links, in the background within the process,
 * row by row through the link service (so every rule, cache invalidation and event of a link
 * write applies), with the counts written to the import's record every second.
 *
 * - Idempotent: a row whose domain and key hold a link of the caller to the same destination
 *   (a keyless row: the caller's link of that type and destination, as upsert matches) is that
 *   link: skipped, or updated when the file brings tags it lacks, another comment or another
 *   click total. A key held by another destination or user fails the row. So running the same
 *   file again creates nothing.
 * - A dry run reads and checks every row the same way and writes nothing but its record.
 * - The record's `updated_at` is a heartbeat and `runner` names the process (host:pid): an import
 *   still "running" whose runner is gone from this host, or whose heartbeat is older than
 *   STALE_MS (another host, a reused pid), belongs to a process that died (kill -9, a lost node)
 *   and is marked failed: by the sweep each process runs every 30 s, and by any read of it (so
 *   a restart on the same host shows it failed at once). A clean stop marks its own imports failed.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { type Caller, canAccessOwnedBy } from '../auth'
import { normaliseHost } from '../domains'
import { type ImportedFacts, LinkOptions, type LinkRecord, type LinkRow } from '../links'
import { AppError, assertValid, forbidden, type Logger, newId, normaliseUrl, notFound, parameterError, toIso } from '../shared'
import { ImportFileError, inspectFile, readRows } from './imports.read'
import { type ImportItem, readRow } from './imports.rows'
import { type ImportRecord, MAX_LISTED_ERRORS } from './imports.schema'
import { type ImportSourceName, SOURCES } from './imports.sources'
import type { ImportProgress, ImportRow, ImportStorePort } from './imports.store'

export type ImportRecordValue = typeof ImportRecord.static

/** A running import that has not written progress for this long belongs to a dead process. */
export const STALE_MS = 60_000
const PROGRESS_EVERY_MS = 1000
/** The loop yields to requests at least this often (SQLite's link writes answer synchronously). */
const YIELD_EVERY_MS = 20
/** New links written per store transaction: one commit per link costs more than its inserts. */
const BATCH = 100

/** This process, as `runner` names it. */
const RUNNER = `${hostname()}:${process.pid}`

/** Whether the process a runner names is certainly gone: it ran on this host and its pid is no more. */
function runnerGone(runner: string | null): boolean {
  if (!runner) return false
  const at = runner.lastIndexOf(':')
  if (runner.slice(0, at) !== hostname()) return false
  const pid = Number(runner.slice(at + 1))
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return false
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

type LinkBody = { data: { url: string }; linkOptions?: Record<string, unknown> }

/** What imports need of the link service. */
export interface ImportLinks {
  createMany(caller: Caller, inputs: { type: string; body: LinkBody; imported?: ImportedFacts }[]): Promise<(AppError | null)[]>
  update(caller: Caller, id: string, body: Partial<LinkBody>, imported: Pick<ImportedFacts, 'importedClicks'>): Promise<LinkRecord>
  checkCreate(caller: Caller, type: string, body: LinkBody): Promise<void>
  findSame(caller: Caller, type: string, data: unknown): Promise<LinkRow | null>
  findLiveRow(domain: string, key: string): LinkRow | null | Promise<LinkRow | null>
  toRecord(row: LinkRow): LinkRecord | Promise<LinkRecord>
}

export interface ImportServiceDeps {
  store: ImportStorePort
  links: ImportLinks
  /** The caller's tag of this name (any case), or null. */
  findTag(userId: string, name: string): { id: string } | null | Promise<{ id: string } | null>
  createTag(caller: Caller, name: string): Promise<{ id: string }>
  isUsableDomain(slug: string): boolean | Promise<boolean>
  defaultDomain: string
  /** Where uploads wait while their import runs (removed when it ends). */
  spoolDir: string
  log: Logger
  now?: () => number
}

export interface StartImport {
  source: ImportSourceName
  /** The file on disk. */
  path: string
  fileName: string | null
  domain?: string
  dryRun: boolean
  /** The service removes the file when the import ends (an upload); a CLI user's own file stays. */
  removeWhenDone: boolean
}

type Outcome = 'created' | 'updated' | 'skipped' | 'queued'

/** A row's problem: it fails alone, the import goes on. */
class RowError extends Error {}

interface Job {
  id: string
  row: ImportRow
  done: Promise<void>
  stop: string | null
}

const short = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}…` : s)

/** The link rules name request fields; an import's user knows columns. */
function rowMessage(message: string): string {
  return message
    .replace(/'linkOptions\.key'/g, 'key')
    .replace(/'linkOptions\.domain'/g, 'domain')
    .replace(/'linkOptions\.comment'/g, 'comment')
    .replace(/'linkOptions\.tags(\.\d+)?'/g, 'tags')
    .replace(/'data\.url'/g, 'url')
    .replace(/'linkOptions'/g, 'the row')
}

export function recordOf(r: ImportRow): ImportRecordValue {
  return {
    id: r.id,
    source: r.source as ImportSourceName,
    status: r.status,
    dryRun: r.dry_run === 1,
    total: r.total,
    created: r.created,
    updated: r.updated,
    skipped: r.skipped,
    failed: r.failed,
    errors: JSON.parse(r.errors),
    userId: r.user_id,
    fileName: r.file_name,
    domain: r.domain ?? '',
    createdAt: toIso(r.created_at)!,
    updatedAt: toIso(r.updated_at)!,
    finishedAt: toIso(r.finished_at),
  }
}

export function createImportService(deps: ImportServiceDeps) {
  const clock = deps.now ?? Date.now
  const { store, links, log } = deps
  const jobs = new Map<string, Job>()

  async function targetDomain(domain: string | undefined): Promise<string> {
    if (domain === undefined || domain === '') return deps.defaultDomain
    let d: string
    try {
      d = normaliseHost(domain)
    } catch {
      throw parameterError(`'domain' ${short(domain)} is not a host name`)
    }
    if (!(await deps.isUsableDomain(d))) throw parameterError(`'domain' ${d} is neither a default short domain nor a configured custom domain`)
    return d
  }

  /** Checks the request, records the import and starts it; the record as it stands. */
  async function start(caller: Caller, input: StartImport): Promise<{ record: ImportRecordValue; done: Promise<void> }> {
    if (caller.role === 'readonly') throw forbidden('a readonly account cannot import links')
    const domain = await targetDomain(input.domain)
    const shape = await inspectFile(input.path, input.source)
    const now = clock()
    const row: ImportRow = {
      id: newId('imp'),
      user_id: caller.userId,
      source: input.source,
      status: 'running',
      dry_run: input.dryRun ? 1 : 0,
      file_name: input.fileName,
      domain,
      runner: RUNNER,
      total: 0,
      created: 0,
      updated: 0,
      skipped: 0,
      failed: 0,
      errors: '[]',
      created_at: now,
      updated_at: now,
      finished_at: null,
    }
    // An upload is named after its import while it runs, so the sweep of orphans knows whose it is.
    const path = input.removeWhenDone ? join(deps.spoolDir, `${row.id}.upload`) : input.path
    if (path !== input.path) renameSync(input.path, path)
    await store.insert(row)
    const job: Job = { id: row.id, row, done: Promise.resolve(), stop: null }
    job.done = run(job, caller, { ...input, path }, shape, domain).finally(() => {
      jobs.delete(job.id)
      if (input.removeWhenDone) rmSync(path, { force: true })
    })
    jobs.set(job.id, job)
    return { record: recordOf(row), done: job.done }
  }

  async function run(job: Job, caller: Caller, input: StartImport, shape: Awaited<ReturnType<typeof inspectFile>>, domain: string): Promise<void> {
    const r = job.row
    const errors: { row: number; message: string }[] = []
    const format = SOURCES[input.source]
    const isCsv = input.source === 'csv'
    const dry = input.dryRun
    const tagIds = new Map<string, string>()
    /** Dry run: what earlier rows would have written, by domain and key (or type and destination): its destination. */
    const planned = new Map<string, string>()
    let stopped = false

    const fail = (row: number, message: string) => {
      r.failed++
      // A batch reports its rows after later rows' own problems: kept in file order.
      if (errors.length < MAX_LISTED_ERRORS) errors.push({ row, message })
      else if (row < errors.at(-1)!.row) errors[errors.length - 1] = { row, message }
      else return
      for (let i = errors.length - 1; i > 0 && errors[i - 1]!.row > errors[i]!.row; i--) [errors[i - 1], errors[i]] = [errors[i]!, errors[i - 1]!]
    }
    const progress = (status: ImportRow['status'], finished: boolean): ImportProgress => ({
      status,
      total: r.total,
      created: r.created,
      updated: r.updated,
      skipped: r.skipped,
      failed: r.failed,
      errors: JSON.stringify(errors),
      updated_at: clock(),
      finished_at: finished ? clock() : null,
    })
    const write = async (status: ImportRow['status'], finished: boolean) => {
      const p = progress(status, finished)
      Object.assign(r, p)
      // Refused when a sweep declared this import dead (this process stalled past STALE_MS): stop.
      if (!(await store.progress(r.id, p))) stopped = true
    }
    let writing: Promise<void> = Promise.resolve()
    const timer = setInterval(() => {
      writing = writing.then(() => write('running', false)).catch((e) => log.warn('import progress not written', { id: r.id, error: String(e) }))
    }, PROGRESS_EVERY_MS)

    async function domainOf(item: ImportItem): Promise<string> {
      // A memory read in the domain service (no cache here: a file may name any number of domains).
      if (item.domain && (await deps.isUsableDomain(item.domain))) return item.domain
      if (item.domain && format.ownDomains) throw new RowError(`domain ${short(item.domain)} is not one of your short domains`)
      return domain
    }

    /** Tag ids for names, the caller's own; missing ones are created (a dry run names them `new:`). */
    async function tagsOf(names: string[]): Promise<string[]> {
      const out: string[] = []
      for (const name of names) {
        const k = name.toLowerCase()
        let id = tagIds.get(k)
        if (id === undefined) {
          const found = await deps.findTag(caller.userId, name)
          if (found) id = found.id
          else if (dry) id = `new:${k}`
          else {
            try {
              id = (await deps.createTag(caller, name)).id
            } catch (e) {
              // Made meanwhile (another import, the dashboard): use it.
              const again = await deps.findTag(caller.userId, name)
              if (!again) throw e
              id = again.id
            }
          }
          tagIds.set(k, id)
        }
        out.push(id)
      }
      return out
    }

    async function sameLink(existing: LinkRow, item: ImportItem, key: string | undefined, d: string): Promise<Outcome> {
      if (existing.user_id !== caller.userId) throw new RowError(`key "${key}" is already used on ${d}`)
      const url = normaliseUrl(item.url, 'url')
      if (existing.link_type !== item.type || existing.destination !== url)
        throw new RowError(`key "${existing.key}" on ${d} already leads to ${short(existing.destination)}`)
      const record = await links.toRecord(existing)
      const tags = await tagsOf(item.tags)
      const missing = tags.filter((id) => !record.tags.includes(id))
      const comment = item.comment !== undefined && item.comment !== (record.comments ?? undefined) ? item.comment : undefined
      const clicks = item.clicks !== undefined && item.clicks !== record.importedClicks ? item.clicks : undefined
      if (missing.length === 0 && comment === undefined && clicks === undefined) return 'skipped'
      if (record.tags.length + missing.length > 30) throw new RowError(`the link would carry more than 30 tags`)
      if (dry) return 'updated'
      const linkOptions: Record<string, unknown> = {}
      if (missing.length) linkOptions.tags = [...record.tags, ...missing]
      if (comment !== undefined) linkOptions.comment = comment
      await links.update(caller, existing.id, Object.keys(linkOptions).length ? { linkOptions } : {}, { importedClicks: clicks })
      return 'updated'
    }

    /** New links waiting for one write, and what each is (domain and key, or type and destination): a row naming one waits for the write. */
    const batch: { row: number; input: { type: string; body: LinkBody; imported: ImportedFacts } }[] = []
    const batchSlots = new Set<string>()
    async function flush(): Promise<void> {
      if (batch.length === 0) return
      const items = batch.splice(0)
      batchSlots.clear()
      const refused = await links.createMany(
        caller,
        items.map((b) => b.input),
      )
      for (const [i, e] of refused.entries()) {
        if (e) fail(items[i]!.row, rowMessage(e.message))
        else r.created++
      }
    }

    async function importItem(item: ImportItem): Promise<Outcome> {
      const d = await domainOf(item)
      const data = { url: item.url }
      const slot = item.key ? `${d}\n${item.key}` : `${item.type}\n${normaliseUrl(item.url, 'url')}`
      if (batchSlots.has(slot)) await flush()
      const existing = item.key ? await links.findLiveRow(d, item.key) : await links.findSame(caller, item.type, data)
      if (existing) return sameLink(existing, item, item.key, d)
      const linkOptions: Record<string, unknown> = { domain: d }
      if (item.key) linkOptions.key = item.key
      if (item.comment) linkOptions.comment = item.comment
      if (dry) {
        const earlier = planned.get(slot)
        const destination = `${item.type}\n${normaliseUrl(item.url, 'url')}`
        if (earlier !== undefined) {
          if (earlier === destination) return 'skipped'
          throw new RowError(`key "${item.key}" is already used on ${d} by an earlier row`)
        }
        assertValid(LinkOptions, linkOptions, 'linkOptions')
        await links.checkCreate(caller, item.type, { data, linkOptions })
        await tagsOf(item.tags)
        planned.set(slot, destination)
        return 'created'
      }
      const tags = await tagsOf(item.tags)
      if (tags.length) linkOptions.tags = tags
      assertValid(LinkOptions, linkOptions, 'linkOptions')
      batch.push({
        row: item.row,
        input: { type: item.type, body: { data, linkOptions }, imported: { createdAt: item.createdAt, importedClicks: item.clicks } },
      })
      batchSlots.add(slot)
      if (batch.length >= BATCH) await flush()
      return 'queued'
    }

    let status: ImportRow['status'] = 'done'
    try {
      // Counted first, so progress has a total; a file that breaks off is counted up to the break.
      try {
        for await (const _ of readRows(input.path, input.source, shape)) r.total++
      } catch (e) {
        if (!(e instanceof ImportFileError)) throw e
      }
      let lastYield = performance.now()
      for await (const read of readRows(input.path, input.source, shape)) {
        if (job.stop !== null || stopped) {
          if (job.stop !== null) {
            await flush()
            fail(read.row, job.stop)
          }
          status = 'failed'
          break
        }
        if (read.error !== undefined) fail(read.row, read.error)
        else {
          const checked = readRow(read.raw, read.row, { csv: isCsv })
          if (checked.error !== undefined) fail(read.row, checked.error)
          else {
            try {
              const outcome = await importItem(checked.item)
              if (outcome !== 'queued') r[outcome]++
            } catch (e) {
              if (e instanceof RowError) fail(read.row, e.message)
              else if (e instanceof AppError && e.code !== 'internal_server_error' && e.code !== 'service_unavailable') fail(read.row, rowMessage(e.message))
              else throw e
            }
          }
        }
        if (performance.now() - lastYield > YIELD_EVERY_MS) {
          await new Promise((resolve) => setImmediate(resolve))
          lastYield = performance.now()
        }
      }
      if (status === 'done') await flush()
    } catch (e) {
      status = 'failed'
      if (e instanceof ImportFileError) {
        // The rows read before the fault are good: the waiting ones are written.
        await flush().catch((err: unknown) => log.error('import batch not written', { id: r.id, error: String(err) }))
        fail(e.row, e.message)
      } else {
        const unreachable = e instanceof AppError && e.code === 'service_unavailable'
        fail(
          r.created + r.updated + r.skipped + r.failed + 1,
          unreachable ? `the store could not be reached; the import stopped here` : `internal error; the import stopped here (quote import ${r.id})`,
        )
        if (!unreachable) log.error('import failed', { id: r.id, error: String((e as Error)?.stack ?? e) })
      }
    } finally {
      clearInterval(timer)
      await writing
      await write(status, true).catch((e) => log.error('import result not written', { id: r.id, error: String(e) }))
    }
  }

  /** Whether a running import's process is dead (not one of this process's jobs). */
  const isDead = (row: ImportRow) => !jobs.has(row.id) && (row.updated_at < clock() - STALE_MS || runnerGone(row.runner))

  /** Marks running imports whose process died as failed. */
  async function sweep(): Promise<void> {
    const now = clock()
    for (const row of await store.running()) {
      if (!isDead(row)) continue
      const errors = JSON.parse(row.errors) as { row: number; message: string }[]
      errors.push({
        row: 0,
        message: 'the server running this import stopped; rows before this were imported. Import the same file again to finish it (nothing is duplicated).',
      })
      await store.failRunning(row.id, JSON.stringify(errors.slice(-MAX_LISTED_ERRORS)), now, row.updated_at)
    }
  }

  /** Uploads left behind by a process that died: removed once their import is no longer running. */
  async function removeOrphanUploads(): Promise<void> {
    const names = existsSync(deps.spoolDir) ? readdirSync(deps.spoolDir) : []
    for (const name of names) {
      const path = join(deps.spoolDir, name)
      const id = name.replace(/\.upload$/, '')
      const row = id.startsWith('imp_') ? await store.get(id) : null
      const old = statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0
      if (jobs.has(id)) continue
      if (row?.status === 'running') continue
      if (row || clock() - old > STALE_MS) rmSync(path, { force: true })
    }
  }

  const sweeper = setInterval(() => {
    sweep()
      .then(removeOrphanUploads)
      .catch((e) => log.warn('import sweep failed', { error: String(e) }))
  }, STALE_MS / 2)
  sweeper.unref()

  return {
    start,
    sweep,
    removeOrphanUploads,
    /** A fresh path under the spool directory for an upload about to be received. */
    uploadPath(): string {
      mkdirSync(deps.spoolDir, { recursive: true })
      return join(deps.spoolDir, `${newId('upl')}.upload`)
    },
    async get(caller: Caller, id: string): Promise<ImportRecordValue> {
      let row = await store.get(id)
      if (!row) throw notFound(`import ${id}`)
      if (!canAccessOwnedBy(caller, row.user_id)) throw forbidden(`import ${id} belongs to another user`)
      if (row.status === 'running' && isDead(row)) {
        await sweep()
        row = (await store.get(id))!
      }
      return recordOf(row)
    },
    /** Stops this process's imports (server shutdown): each is marked failed at its current row. */
    async stop(): Promise<void> {
      clearInterval(sweeper)
      for (const job of jobs.values())
        job.stop = 'the server was stopped during this import; rows before this were imported. Import the same file again to finish it (nothing is duplicated).'
      await Promise.all([...jobs.values()].map((j) => j.done.catch(() => {})))
    },
  }
}
export type ImportService = ReturnType<typeof createImportService>
