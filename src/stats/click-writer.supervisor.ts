/**
 * Keeps a writer thread honest. The click writer runs in a worker (ADR 2); a worker that
 * cannot load or open, throws, exits, or stops answering used to leave every batch waiting on
 * it for ever, merged in memory, without a word (issue 24: 8.97M redirects stored none). Here
 * any of those is noticed at once:
 * - an `error` or `close` event, an `open-failed` answer, an open unanswered for `openMs` or
 *   a write for `answerMs` (then the thread is terminated) ends that writer: its unanswered writes
 *   fail, so the recorder keeps their rows and writes them again (nothing is lost; a batch
 *   is written again only when its writer never answered for it), and one error is logged;
 * - a new writer starts `retryMs` later; after `maxFailuresInARow` writers failed in a row
 *   (a writer counts as good once it has written a batch), writes go inline on this thread;
 * - `health()` says so all along, for /readyz.
 * The protocol: open → opened | open-failed; any request carries a `req` number and is answered
 * by `answer` (with its value) or `failed` for that `req`; close → closed. Other messages go to
 * `onMessage`. Requests go through a channel bound to one writer (`connect()`): the events
 * engine's reads, backups and exports (its worker, click-writer.worker.ts) ride on the same
 * thread as its batches, and fail with it (a read on a new writer would find no snapshot).
 * Only batches (`watched` requests) are bounded by `answerMs`: a read or a compaction may
 * take long.
 */
import type { Logger } from '../shared'

export interface WriterHealth {
  /**
   * False while no writer can take a batch (starting, or restarting after one was lost), and
   * while a batch has waited for its answer longer than `stallMs` (a batch takes milliseconds).
   */
  ok: boolean
  /** `inline`: writes run on the main thread since writer threads kept failing. */
  state: 'starting' | 'ready' | 'restarting' | 'inline' | 'closed'
  /** Writers lost since the start. */
  restarts: number
  /** Why the last writer was lost, if one was. */
  lastError: string | null
  /** How long the oldest unanswered batch has waited (0: none waits). */
  waitingMs: number
}

/** A batch failed: its rows stay with the caller. `code` keeps the writer's error code (SQLITE_FULL, …). */
export class WriteFailedError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message)
    this.name = 'WriteFailedError'
  }
}

export interface SupervisedWriterOptions<Inline> {
  /** A new writer thread (not yet opened). */
  spawn(): Worker
  /** The open message for writer number `generation` (1, 2, …). */
  openMessage(generation: number): object
  /** The writer on this thread, when writer threads keep failing (and at stop, when none is ready). */
  inline?: () => Inline
  /** A message of the writer that is not an answer (log lines, progress, a backup's pause). */
  onMessage?: (message: { type: string } & Record<string, unknown>) => void
  log: Logger
  /** A write unanswered this long means the writer stopped answering. */
  answerMs?: number
  /** An open unanswered this long (at least `answerMs`: starting a thread on a loaded machine takes seconds). */
  openMs?: number
  /** Writers lost in a row (none wrote a batch) before writes go inline. */
  maxFailuresInARow?: number
  /** Pause before a new writer. */
  retryMs?: number
  /** A batch unanswered this long makes health() not ok (the writer is slow or stuck). */
  stallMs?: number
  /** What the writer writes, for log lines. */
  name?: string
}

/** Defaults: a batch (with its rollups) takes milliseconds; a minute unanswered is a stuck writer. */
export const WRITER_ANSWER_MS = 60_000
const OPEN_MS = 30_000
const MAX_FAILURES_IN_A_ROW = 3
const RETRY_MS = 1_000
const STALL_MS = 10_000

interface Pending {
  resolve(value: unknown): void
  reject(e: Error): void
  /** Batches only: their answer bound, and when they were sent (health). */
  timer: ReturnType<typeof setTimeout> | null
  sentAt: number | null
}

/** Requests to one writer thread; they fail when it is lost. */
export interface WriterChannel {
  /**
   * Posts `message` with a new `req` (and `id`, unless it has one); settles with the answer's value. `watched`: a batch,
   * bounded by `answerMs`; `transfer`: buffers moved to the thread with the message (the sender's copies are detached).
   */
  ask<T = unknown>(message: { type: string } & Record<string, unknown>, opts?: { watched?: boolean; transfer?: ArrayBuffer[] }): Promise<T>
  /** A message that gets no answer (interrupt a read, end a snapshot, resume a backup); dropped once the writer is lost. */
  post(message: { type: string } & Record<string, unknown>): void
}

interface Generation {
  n: number
  worker: Worker
  /** Settles when the writer answers the open: resolved by `opened`, rejected when it is lost first. */
  opened: Promise<void>
  openAnswered: { resolve(): void; reject(e: Error): void }
  isOpen: boolean
  lost: boolean
  waiting: Map<number, Pending>
  openTimer: ReturnType<typeof setTimeout> | null
  closed: (() => void) | null
}

/** The error line of an error a worker reported (Bun's carry a source listing, and mark the line `error: `). */
export function errorLine(message: string): string {
  const lines = message.split('\n').map((l) => l.trim())
  const line = lines.find((l) => /^(\w*Error|error): /.test(l)) ?? lines.find(Boolean) ?? message
  return line.replace(/^error: /, '')
}

export function createSupervisedWriter<Inline>(opts: SupervisedWriterOptions<Inline>) {
  const { log } = opts
  const name = opts.name ?? 'writer'
  const answerMs = opts.answerMs ?? WRITER_ANSWER_MS
  const openMs = Math.max(opts.openMs ?? OPEN_MS, answerMs)
  const maxFailures = opts.maxFailuresInARow ?? MAX_FAILURES_IN_A_ROW
  const retryMs = opts.retryMs ?? RETRY_MS
  const stallMs = Math.min(opts.stallMs ?? STALL_MS, answerMs)
  let generation = 0
  let current: Generation | null = null
  let state: WriterHealth['state'] = 'starting'
  let restarts = 0
  let failuresInARow = 0
  let lastError: string | null = null
  let inlineWriter: Inline | null = null
  let retryTimer: ReturnType<typeof setTimeout> | null = null
  /** Waiting for the next writer to open (after a loss): resolved when one is current. */
  let nextWriter: { promise: Promise<void>; resolve(): void } | null = null
  let nextId = 1
  let closing: Promise<Inline | null> | null = null

  function start(): Generation {
    let openAnswered!: Generation['openAnswered']
    const opened = new Promise<void>((resolve, reject) => {
      openAnswered = { resolve, reject }
    })
    opened.catch(() => {}) // a loss is handled in lose(); waiters see the rejection themselves
    const gen: Generation = {
      n: ++generation,
      worker: opts.spawn(),
      opened,
      openAnswered,
      isOpen: false,
      lost: false,
      waiting: new Map(),
      openTimer: null,
      closed: null,
    }
    current = gen
    state = 'starting'
    const { worker } = gen
    worker.addEventListener('message', (ev: MessageEvent) => {
      const m = ev.data as { type: string; req?: number; value?: unknown; error?: string; code?: string }
      if (m.type === 'opened') {
        if (gen.openTimer) clearTimeout(gen.openTimer)
        gen.isOpen = true
        if (!gen.lost) state = 'ready'
        gen.openAnswered.resolve()
        if (nextWriter && current === gen) {
          nextWriter.resolve()
          nextWriter = null
        }
      } else if (m.type === 'open-failed') lose(gen, `could not open: ${errorLine(m.error ?? '')}`)
      else if (m.type === 'answer' || m.type === 'failed') {
        const p = gen.waiting.get(m.req!)
        if (!p) return
        gen.waiting.delete(m.req!)
        if (p.timer) clearTimeout(p.timer)
        if (m.type === 'answer') {
          if (p.timer) failuresInARow = 0 // a writer that wrote a batch is a good one
          p.resolve(m.value)
        } else p.reject(new WriteFailedError(errorLine(m.error ?? 'request failed'), m.code))
      } else if (m.type === 'closed') gen.closed?.()
      else if (!gen.lost) opts.onMessage?.(m as { type: string } & Record<string, unknown>)
    })
    // A thread that fails to load, throws or exits says so here (it had no listener: issue 24).
    worker.addEventListener('error', (ev: Event) => {
      const e = ev as ErrorEvent
      lose(gen, `failed: ${errorLine(String(e.message ?? e.error ?? 'unknown error'))}`)
    })
    worker.addEventListener('close', (ev: Event) => {
      if (gen.closed) return gen.closed() // closed on purpose
      lose(gen, `ended (exit code ${(ev as CloseEvent).code ?? '?'})`)
    })
    gen.openTimer = setTimeout(() => lose(gen, `did not open within ${openMs} ms`), openMs)
    worker.postMessage(opts.openMessage(gen.n))
    return gen
  }

  function lose(gen: Generation, reason: string) {
    if (gen.lost) return
    gen.lost = true
    if (gen.openTimer) clearTimeout(gen.openTimer)
    try {
      gen.worker.terminate()
    } catch {}
    const error = new WriteFailedError(`the ${name} thread ${reason}`)
    gen.openAnswered.reject(error)
    const unanswered = gen.waiting.size
    for (const p of gen.waiting.values()) {
      if (p.timer) clearTimeout(p.timer)
      p.reject(error)
    }
    gen.waiting.clear()
    if (current !== gen || state === 'closed' || state === 'inline') return
    restarts++
    failuresInARow++
    lastError = error.message
    if (opts.inline && failuresInARow >= maxFailures) {
      log.error(`${error.message}; ${failuresInARow} in a row`, { restarts, unansweredBatches: unanswered })
      goInline(`${failuresInARow} ${name} threads in a row failed`)
      return
    }
    state = 'restarting'
    log.error(`${error.message}; starting a new one`, { restarts, unansweredBatches: unanswered, retryInMs: retryMs })
    current = null
    let resolve!: () => void
    nextWriter ??= { promise: new Promise<void>((r) => (resolve = r)), resolve: () => resolve() }
    retryTimer = setTimeout(() => {
      retryTimer = null
      if (state === 'restarting') start()
    }, retryMs)
  }

  /** Writes go inline from now on; a writer thread still working is ended (its unanswered batches fail, to be written again inline). */
  function goInline(why: string) {
    if (!opts.inline || inlineWriter) return
    inlineWriter = opts.inline()
    state = 'inline'
    lastError ??= why
    if (retryTimer) clearTimeout(retryTimer)
    retryTimer = null
    nextWriter?.resolve()
    nextWriter = null
    if (current && !current.lost) lose(current, `was replaced by writes on the main thread (${why})`)
    log.warn(`${name}: writing on the main thread from now on`, { reason: why })
  }

  function waitingMs(): number {
    let oldest = Number.POSITIVE_INFINITY
    for (const p of current?.waiting.values() ?? []) if (p.sentAt !== null) oldest = Math.min(oldest, p.sentAt)
    return oldest === Number.POSITIVE_INFINITY ? 0 : Date.now() - oldest
  }

  /** Waits for a writer that has opened; null when writes go inline. */
  async function ready(): Promise<Generation | null> {
    for (;;) {
      if (inlineWriter) return null
      if (state === 'closed') throw new WriteFailedError(`the ${name} is closed`)
      if (!current && !nextWriter) start()
      if (!current) {
        await nextWriter!.promise
        continue
      }
      const gen = current
      await gen.opened // rejects when this writer is lost: the batch fails and is kept
      if (!gen.lost) return gen
    }
  }

  function channelOf(gen: Generation): WriterChannel {
    return {
      ask<T>(message: { type: string } & Record<string, unknown>, o: { watched?: boolean; transfer?: ArrayBuffer[] } = {}): Promise<T> {
        if (gen.lost) return Promise.reject(new WriteFailedError(`the ${name} thread was lost`))
        const req = nextId++
        return new Promise<T>((resolve, reject) => {
          const timer = o.watched ? setTimeout(() => lose(gen, `did not answer a write within ${answerMs} ms`), answerMs) : null
          gen.waiting.set(req, { resolve: resolve as (v: unknown) => void, reject, timer, sentAt: o.watched ? Date.now() : null })
          gen.worker.postMessage({ ...message, id: message.id ?? req, req }, o.transfer ?? [])
        })
      },
      post(message) {
        if (!gen.lost) gen.worker.postMessage(message)
      },
    }
  }

  async function closeOnce(): Promise<Inline | null> {
    const gen = current
    state = 'closed'
    if (retryTimer) clearTimeout(retryTimer)
    nextWriter?.resolve() // writes waiting for a writer now fail (closed)
    nextWriter = null
    // A writer still opening is waited for (bounded by openMs): terminating a thread while the
    // engine's native calls are in flight aborts the process (Bun 1.4.5, a callback into a dead thread).
    if (gen && !gen.lost && !gen.isOpen) await gen.opened.catch(() => {})
    if (!gen || gen.lost) return inlineWriter
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, answerMs)
      gen.closed = () => {
        clearTimeout(timer)
        resolve()
      }
      gen.worker.postMessage({ type: 'close' })
    })
    gen.worker.terminate()
    return inlineWriter
  }

  return {
    /** A channel to a writer that has opened (waiting for one while a lost writer is replaced); null when the writer runs inline. */
    async connect(): Promise<{ channel: WriterChannel } | { inline: Inline }> {
      const gen = await ready()
      return gen ? { channel: channelOf(gen) } : { inline: inlineWriter! }
    },
    health(): WriterHealth {
      const waiting = waitingMs()
      return { ok: state === 'inline' || (state === 'ready' && waiting < stallMs), state, restarts, lastError, waitingMs: waiting }
    },
    /** Writes go inline from now on (stop() does this when no writer is ready, so held rows still get written). */
    goInline,
    /**
     * Closes the writer thread; returns the writer on this thread, if writes went inline (the caller closes it).
     * Once: the recorder's stop and the store's close both call it, and a second close must not wait for an
     * answer from a thread the first one ended (it waited out `answerMs` when the thread's close event came
     * before it: a SIGTERM that hit the 45 s shutdown deadline).
     */
    close(): Promise<Inline | null> {
      closing ??= closeOnce()
      return closing
    },
  }
}

export type SupervisedWriter<Inline> = ReturnType<typeof createSupervisedWriter<Inline>>
