/** The main thread's handle on the delivery worker (webhooks.dispatch.worker.ts): the dispatcher's start, wake, stats and stop across threads. */
import type { Config } from '../config'
import { type Logger, workerSpec } from '../shared'
import type { DispatcherStats } from './webhooks.dispatch'
import type { DeliveryStore, WorkerMessage } from './webhooks.dispatch.worker'

/** How long stop() waits for the thread: one attempt's deadline and the write of its outcome. */
const STOP_WAIT_MS = 15_000

export interface DeliveryHandle {
  start(): Promise<void>
  wake(): void
  stop(): Promise<void>
  stats(): Promise<DispatcherStats | null>
  idle(): Promise<void>
}

export function deliveryThread(o: {
  config: Config
  store: DeliveryStore
  soleNode: boolean
  log: Logger
  quiet?: boolean
  pollMs?: number
  concurrency?: number
}): DeliveryHandle {
  let worker: Worker | null = null
  let nextId = 1
  const waiting = new Map<number, (value: unknown) => void>()
  let started: Promise<void> | null = null
  let stopped: (() => void) | null = null
  const send = (m: WorkerMessage) => worker?.postMessage(m)
  const ask = <T>(m: (id: number) => WorkerMessage): Promise<T> => {
    if (!worker) return Promise.resolve(null as T)
    const id = nextId++
    return new Promise<T>((resolve) => {
      waiting.set(id, resolve as (v: unknown) => void)
      send(m(id))
    })
  }
  return {
    start() {
      started ??= new Promise<void>((resolve, reject) => {
        const w = new Worker(workerSpec('webhooks/webhooks.dispatch.worker.ts'))
        worker = w
        w.onmessage = (ev: MessageEvent) => {
          const m = ev.data
          if (m.type === 'started') resolve()
          else if (m.type === 'failed') {
            o.log.error('webhook delivery thread failed', { error: m.error })
            reject(new Error(m.error))
          } else if (m.type === 'stats' || m.type === 'idle') {
            waiting.get(m.id)?.(m.stats ?? null)
            waiting.delete(m.id)
          } else if (m.type === 'stopped') stopped?.()
        }
        send({ type: 'start', config: o.config, store: o.store, soleNode: o.soleNode, quiet: o.quiet ?? false, pollMs: o.pollMs, concurrency: o.concurrency })
      })
      return started
    },
    wake: () => send({ type: 'wake' }),
    stats: () => ask<DispatcherStats | null>((id) => ({ type: 'stats', id })),
    idle: () => ask<void>((id) => ({ type: 'idle', id })),
    async stop() {
      if (!worker) return
      const w = worker
      await started?.catch(() => {})
      // Attempts in flight end within their deadline; a store that does not answer must not hold up a SIGTERM.
      let timer: ReturnType<typeof setTimeout> | undefined
      await Promise.race([
        new Promise<void>((resolve) => {
          stopped = resolve
          send({ type: 'stop' })
        }),
        new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            o.log.warn('webhook delivery thread did not stop in time; its leases will run out', {})
            resolve()
          }, STOP_WAIT_MS)
        }),
      ])
      clearTimeout(timer)
      w.terminate()
      worker = null
    },
  }
}
