/**
 * One worker thread that runs jobs one at a time, for work on user images (decoding scans,
 * drawing logos and frames) that must not stall the event loop. Started on first use;
 * a job over its deadline, or a worker that crashes, fails that job alone (the worker is
 * terminated and the next job starts a fresh one); a worker whose heap has grown past
 * `recycleAtBytes` (wasm memory never shrinks) is replaced after its job.
 *
 * `resourceLimits` is passed for runtimes that enforce it; Bun 1.4 does not (measured: a
 * worker with maxOldGenerationSizeMb 64 grew to 2.4 GB), so memory is held down by the
 * pixel budget checked before a job is sent (qr.image-size.ts) and by the recycling here.
 */
import { AppError, type ErrorCode, workerSpec } from '../shared'

export interface JobWorkerOptions {
  /** Entry file, by path under src/ (listed in WORKER_ENTRYPOINTS). */
  entry: string
  /** What the jobs are, for error messages ("decoding the image"). */
  doing: string
  timeoutMs: number
  recycleAtBytes: number
}

/** What a worker answers per job. */
export type JobAnswer<Out> = { id: number; heapBytes: number } & ({ output: Out } | { error: { code?: ErrorCode; message: string } })

interface Job<In, Out> {
  id: number
  input: In
  resolve: (out: Out) => void
  reject: (e: Error) => void
}

export function createJobWorker<In, Out>(opts: JobWorkerOptions) {
  let worker: Worker | null = null
  let running: (Job<In, Out> & { timer: Timer; on: Worker }) | null = null
  const queue: Job<In, Out>[] = []
  let nextId = 1

  function stopWorker() {
    worker?.terminate()
    worker = null
  }

  function settle(job: Job<In, Out>, answer: { output: Out } | { error: Error }) {
    clearTimeout(running?.timer)
    running = null
    if ('error' in answer) job.reject(answer.error)
    else job.resolve(answer.output)
    pump()
  }

  function start(): Worker {
    const w = new Worker(workerSpec(opts.entry), { resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32 } } as WorkerOptions)
    w.onmessage = (ev: MessageEvent<JobAnswer<Out>>) => {
      const job = running
      if (!job || job.on !== w || ev.data.id !== job.id) return
      if (ev.data.heapBytes > opts.recycleAtBytes) stopWorker()
      if ('error' in ev.data) {
        const { code, message } = ev.data.error
        settle(job, { error: code ? new AppError(code, message) : new Error(message) })
      } else settle(job, { output: ev.data.output })
    }
    w.onerror = (e) => {
      if (worker === w) worker = null
      w.terminate()
      if (running?.on === w) settle(running, { error: new Error(`the worker ${opts.doing} failed: ${e.message}`) })
    }
    // An idle worker must not keep the process alive.
    ;(w as unknown as { unref?: () => void }).unref?.()
    return w
  }

  function pump() {
    if (running) return
    const job = queue.shift()
    if (!job) return
    worker ??= start()
    const on = worker
    const timer = setTimeout(() => {
      stopWorker()
      settle(job, { error: new Error(`${opts.doing} took longer than ${opts.timeoutMs / 1000} s`) })
    }, opts.timeoutMs)
    running = { ...job, timer, on }
    on.postMessage({ id: job.id, input: job.input })
  }

  return {
    run(input: In): Promise<Out> {
      const done = new Promise<Out>((resolve, reject) => queue.push({ id: nextId++, input, resolve, reject }))
      pump()
      return done
    },
    stop() {
      stopWorker()
    },
  }
}

/**
 * The worker side: answers each job with `handle`'s result, or its error (an AppError's
 * code is kept), and the worker's heap size. Call at the top of the entry file, before
 * any await (a compiled binary needs `onmessage` registered first).
 */
export function answerJobs<In, Out>(handle: (input: In) => Promise<Out> | Out) {
  const heapBytes = () => {
    const m = process.memoryUsage()
    return m.heapUsed + m.external
  }
  // Called in a worker: its global scope is the Worker (no DOM types on the server).
  const self = globalThis as unknown as Worker
  self.onmessage = async (ev: MessageEvent<{ id: number; input: In }>) => {
    const { id, input } = ev.data
    let answer: JobAnswer<Out>
    try {
      answer = { id, output: await handle(input), heapBytes: 0 }
    } catch (e) {
      answer = { id, error: e instanceof AppError ? { code: e.code, message: e.message } : { message: String((e as Error)?.message ?? e) }, heapBytes: 0 }
    }
    answer.heapBytes = heapBytes()
    postMessage(answer)
  }
}
