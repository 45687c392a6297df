/** One decode worker, started on first use; requests are matched to answers by id. */
import { workerSpec } from '../shared/worker-spec'

export function createScanWorker() {
  let worker: Worker | null = null
  let nextId = 1
  const waiting = new Map<number, { resolve: (t: string | null) => void; reject: (e: Error) => void }>()

  function start(): Worker {
    const w = new Worker(workerSpec('qr/qr.scan.worker.ts'))
    w.onmessage = (ev: MessageEvent<{ id: number; text?: string | null; error?: string }>) => {
      const job = waiting.get(ev.data.id)
      waiting.delete(ev.data.id)
      if (!job) return
      if (ev.data.error !== undefined) job.reject(new Error(ev.data.error))
      else job.resolve(ev.data.text ?? null)
    }
    w.onerror = (e) => {
      // A crashed worker fails its jobs; the next scan starts a new one.
      for (const job of waiting.values()) job.reject(new Error(`scan worker failed: ${e.message}`))
      waiting.clear()
      worker = null
    }
    // An idle decoder must not keep the process alive.
    ;(w as unknown as { unref?: () => void }).unref?.()
    return w
  }

  return {
    decode(bytes: Uint8Array): Promise<string | null> {
      worker ??= start()
      const id = nextId++
      const done = new Promise<string | null>((resolve, reject) => waiting.set(id, { resolve, reject }))
      worker.postMessage({ id, bytes })
      return done
    },
    stop() {
      worker?.terminate()
      worker = null
    },
  }
}
