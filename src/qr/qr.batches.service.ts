/**
 * Print runs: up to 10,000 of the caller's links rendered as a ZIP of PNG, SVG or PDF files or as
 * PDF sheets. A run is queued and made in the background, one code after the other, each code
 * checked to scan as every image the service renders (a code that does not is left out and listed
 * in `failures`). The result is written to the store in chunks of about a megabyte as the codes
 * are made (fflate's streaming ZIP, pdfkit's page stream), so memory stays bounded whatever the
 * run's size, and any node can serve the download. Results are kept 24 hours.
 *
 * Runs survive nothing: the node running one renews its `heartbeat_at` every few seconds; a run
 * whose node stopped (restart, crash, kill -9) is marked failed once its heartbeat is a minute
 * old (when read, and by every node's sweep), with an error that says to start it again.
 */
import { Zip, ZipDeflate, ZipPassThrough } from 'fflate'
import { type Caller, canAccessOwnedBy } from '../auth'
import { AppError, type Logger, newId, notFound, parameterError, toIso } from '../shared'
import { BATCH_KEEP_MS, type BatchRecord, type CreateBatchBody, MAX_BATCH_LINKS } from './qr.batches.schema'
import type { BatchRow, BatchStorePort } from './qr.batches.store'
import type { QrFormat, RenderedQr } from './qr.render'
import { type OwnedDesign, qrTextFor } from './qr.service'
import { openSheet, sheetLayout } from './qr.sheet'

/** What a run needs of a link. */
export interface BatchLink {
  id: string
  domain: string
  key: string
  shortLink: string
  qrOptions: unknown | null
  userId: string
}

export interface BatchServiceDeps {
  store: BatchStorePort
  links: {
    get(caller: Caller, id: string): Promise<BatchLink>
    list(caller: Caller, q: Record<string, unknown>): Promise<{ links: BatchLink[]; total: number }>
  }
  templates: { qrDesignOf(id: string): OwnedDesign | Promise<OwnedDesign> }
  renderQr(input: { text: string; qrOptions: unknown; ownerId: string; format: QrFormat; width: number; cache?: boolean }): Promise<RenderedQr>
  log: Logger
  now?: () => number
}

/** A result chunk is written once this many bytes are waiting. */
const CHUNK_BYTES = 1024 * 1024
const HEARTBEAT_MS = 5_000
/** A run whose heartbeat is this old belongs to a node that stopped. */
export const STALE_MS = 60_000
const SWEEP_MS = 10 * 60_000
const PROGRESS_MS = 500
/** Failures kept in the record (each names its link). */
const MAX_FAILURES_KEPT = MAX_BATCH_LINKS

const EXTENSIONS = { 'zip-png': 'png', 'zip-svg': 'svg', 'zip-pdf': 'pdf' } as const
const RENDER_FORMAT: Record<CreateBatchBody['format'], QrFormat> = { 'zip-png': 'png', 'zip-svg': 'svg', 'zip-pdf': 'pdf', 'pdf-sheet': 'vector' }

interface Job {
  id: string
  body: CreateBatchBody
  links: BatchLink[]
  design: OwnedDesign | null
}

export function createBatchService(deps: BatchServiceDeps) {
  const { store, log } = deps
  const clock = deps.now ?? Date.now
  const queue: Job[] = []
  /** Runs of this node, queued or running: their heartbeats are renewed. */
  const mine = new Set<string>()
  let running: Promise<void> | null = null
  let stopped = false

  function recordOf(row: BatchRow): BatchRecord {
    return {
      id: row.id,
      status: row.status,
      total: row.total,
      done: row.done,
      failed: row.failed,
      format: row.format as BatchRecord['format'],
      createdAt: toIso(row.created_at)!,
      finishedAt: toIso(row.finished_at),
      expiresAt: row.finished_at === null ? null : toIso(row.finished_at + BATCH_KEEP_MS),
      size: row.size,
      error: row.error,
      failures: JSON.parse(row.failures),
    }
  }

  async function rowFor(caller: Caller, id: string): Promise<BatchRow> {
    let row = await store.get(id)
    // Another user's run is answered as missing: its existence is not the caller's business.
    if (!row || !canAccessOwnedBy(caller, row.user_id)) throw notFound(`print run ${id}`)
    if ((row.status === 'queued' || row.status === 'running') && row.heartbeat_at < clock() - STALE_MS) {
      await store.failStale(clock() - STALE_MS, clock())
      row = (await store.get(id))!
    }
    return row
  }

  async function linksOf(caller: Caller, body: CreateBatchBody): Promise<BatchLink[]> {
    if ((body.linkIds === undefined) === (body.linkFilter === undefined)) throw parameterError(`'linkIds' or 'linkFilter': give exactly one`)
    if (body.linkIds) {
      const out: BatchLink[] = []
      for (const id of body.linkIds) {
        try {
          out.push(await deps.links.get(caller, id))
        } catch (e) {
          // One the caller may not see (missing, deleted, another user's) makes the whole request not_found.
          if (e instanceof AppError && ['not_found', 'forbidden', 'record_gone'].includes(e.code)) throw notFound(`link ${id}`)
          throw e
        }
      }
      return out
    }
    const out: BatchLink[] = []
    for (let page = 1; ; page++) {
      const { links, total } = await deps.links.list(caller, { ...body.linkFilter, page, pageSize: 100, sortBy: 'created_at', sortOrder: 'asc' })
      if (total > MAX_BATCH_LINKS) throw parameterError(`'linkFilter' matches ${total} links; a print run takes at most ${MAX_BATCH_LINKS}`)
      out.push(...links)
      if (links.length < 100 || out.length >= total) break
    }
    if (out.length === 0) throw parameterError(`'linkFilter' matches no link`)
    return out
  }

  /** Writes result bytes to the store in chunks of about CHUNK_BYTES. */
  function chunkSink(id: string) {
    let pending: Uint8Array[] = []
    let pendingBytes = 0
    let seq = 0
    let size = 0
    const flush = async () => {
      if (pendingBytes === 0) return
      const bytes = Buffer.concat(pending, pendingBytes)
      pending = []
      pendingBytes = 0
      await store.addChunk(id, seq++, bytes)
    }
    return {
      push(bytes: Uint8Array) {
        // Producers may reuse their buffers: keep a copy.
        pending.push(bytes.slice())
        pendingBytes += bytes.length
        size += bytes.length
      },
      maybeFlush: () => (pendingBytes >= CHUNK_BYTES ? flush() : Promise.resolve()),
      flush,
      size: () => size,
    }
  }

  async function run(job: Job): Promise<void> {
    const { id, body, links } = job
    const format = RENDER_FORMAT[body.format]
    const width = body.width ?? 300
    const sink = chunkSink(id)
    const failures: { linkId: string; shortLink: string; message: string }[] = []
    let done = 0
    let lastProgress = 0
    const progress = async (status: BatchRow['status'], extra: { error?: string; finished_at?: number } = {}) => {
      lastProgress = clock()
      await store.progress(id, {
        status,
        done,
        failed: failures.length,
        failures: JSON.stringify(failures.slice(0, MAX_FAILURES_KEPT)),
        size: sink.size(),
        heartbeat_at: lastProgress,
        ...extra,
      })
    }
    await progress('running')
    const sheet = body.format === 'pdf-sheet' ? await openSheet(sheetLayout(body.sheet), (c) => sink.push(c)) : null
    let zipError: Error | null = null
    const zip = sheet
      ? null
      : new Zip((err, data) => {
          if (err) zipError = err
          else sink.push(data)
        })
    for (const link of links) {
      if (stopped) throw new Error('the server stopped while this batch ran; start it again')
      // A macrotask turn between codes: the render's awaits settle as microtasks, which never let the
      // event loop serve a request, so without this a run would hold redirects until it ends.
      await new Promise((resolve) => setImmediate(resolve))
      const design = job.design ?? { qrOptions: link.qrOptions ?? {}, ownerId: link.userId }
      let rendered: RenderedQr
      try {
        // Rendered and decoded (ZXing and ZBar) before it goes in, as every image the service serves.
        rendered = await deps.renderQr({ text: qrTextFor(link.shortLink), ...design, format, width, cache: false })
      } catch (e) {
        failures.push({ linkId: link.id, shortLink: link.shortLink, message: e instanceof AppError ? e.message : 'the code could not be rendered' })
        continue
      }
      if (sheet) {
        const caption = body.sheet?.caption === 'shortLink' ? link.shortLink : body.sheet?.caption === 'none' ? '' : link.key
        sheet.place(rendered.vector!, caption)
      } else {
        const ext = EXTENSIONS[body.format as keyof typeof EXTENSIONS]
        const file = ext === 'svg' ? new ZipDeflate(`${link.domain}_${link.key}.${ext}`, { level: 6 }) : new ZipPassThrough(`${link.domain}_${link.key}.${ext}`)
        zip!.add(file)
        file.push(rendered.body, true)
        if (zipError) throw zipError
      }
      done++
      await sink.maybeFlush()
      if (clock() - lastProgress >= PROGRESS_MS) await progress('running')
    }
    if (sheet) await sheet.finished()
    else {
      zip!.end()
      if (zipError) throw zipError
    }
    await sink.flush()
    await progress('done', { finished_at: clock() })
  }

  async function pump(): Promise<void> {
    for (let job = queue.shift(); job; job = queue.shift()) {
      try {
        await run(job)
      } catch (e) {
        const message = e instanceof AppError ? e.message : `the batch stopped: ${(e as Error).message}`
        log.warn('print run failed', { id: job.id, error: String((e as Error)?.stack ?? e) })
        await Promise.resolve(
          store.progress(job.id, {
            status: 'failed',
            done: 0,
            failed: 0,
            failures: '[]',
            size: 0,
            heartbeat_at: clock(),
            error: message,
            finished_at: clock(),
          }),
        ).catch(() => {})
      } finally {
        mine.delete(job.id)
      }
    }
    running = null
  }

  const timers = [
    setInterval(() => {
      Promise.resolve(store.heartbeat([...mine], clock())).catch((e) => log.warn('print run heartbeat failed', { error: String(e) }))
    }, HEARTBEAT_MS),
    setInterval(() => {
      Promise.resolve()
        .then(() => store.failStale(clock() - STALE_MS, clock()))
        .then(() => store.sweep(clock() - BATCH_KEEP_MS))
        .catch((e) => log.warn('print run sweep failed', { error: String(e) }))
    }, SWEEP_MS),
  ]
  for (const t of timers) t.unref?.()

  return {
    async create(caller: Caller, body: CreateBatchBody): Promise<BatchRecord> {
      if (body.sheet && body.format !== 'pdf-sheet') throw parameterError(`'sheet' is for format pdf-sheet only`)
      if (body.format === 'pdf-sheet') sheetLayout(body.sheet) // refuses a layout where no code fits
      const design = body.templateId ? await deps.templates.qrDesignOf(body.templateId) : null
      const links = await linksOf(caller, body)
      const id = newId('bat')
      const now = clock()
      await store.insert({
        id,
        user_id: caller.userId,
        status: 'queued',
        format: body.format,
        request: JSON.stringify({ ...body, linkIds: undefined }),
        total: links.length,
        created_at: now,
        heartbeat_at: now,
      })
      mine.add(id)
      queue.push({ id, body, links, design })
      running ??= pump()
      return recordOf((await store.get(id))!)
    },
    get: async (caller: Caller, id: string) => recordOf(await rowFor(caller, id)),
    /** The result as a stream of its chunks, read one at a time. */
    async file(caller: Caller, id: string): Promise<Response> {
      const row = await rowFor(caller, id)
      if (row.status !== 'done')
        throw new AppError('conflict', `print run ${id} is ${row.status}${row.error ? `: ${row.error}` : ''}; its file is ready once it is done`)
      let seq = 0
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const bytes = await store.chunk(id, seq++)
          if (bytes) controller.enqueue(bytes)
          else controller.close()
        },
      })
      const sheet = row.format === 'pdf-sheet'
      return new Response(stream, {
        headers: {
          'content-type': sheet ? 'application/pdf' : 'application/zip',
          'content-length': String(row.size),
          'content-disposition': `attachment; filename="${id}.${sheet ? 'pdf' : 'zip'}"`,
        },
      })
    },
    /** Stops taking and making runs (shutdown): a run cut short is marked failed. */
    stop() {
      stopped = true
      for (const t of timers) clearInterval(t)
    },
    /** Settles with the run under way (tests). */
    idle: () => running ?? Promise.resolve(),
  }
}
export type BatchService = ReturnType<typeof createBatchService>
