/**
 * GET /events: the outbox as Server-Sent Events for one caller (contract: "Webhooks and live
 * events"). Each message is `id: <event id>`, `event: <type>`, `data: <envelope>`; a comment
 * line goes out at least every HEARTBEAT_MS; `Last-Event-ID` resumes after that event from the
 * store (an id no longer stored resumes from the oldest event kept). Messages are read from the
 * store only when the client has taken the previous ones (the stream is pulled), so a slow
 * client holds no backlog in memory. The caller's credential is checked again every few
 * seconds: a revoked key or ended session closes the stream, a changed role changes its scope.
 *
 * A stream that asks for link.clicked registers its user (every link for an admin) as a
 * listener for 24 hours (renewed while connected): the click batches then write the visits it
 * may want, so a stream resumed within that time finds what it missed.
 */
import type { Caller } from '../auth'
import { onEventsAppended } from '../events'
import type { Logger } from '../shared'
import { envelopeOf, type ShortLinkOf } from './webhooks.envelope'
import { EVENT_RETENTION_MS, type EventFilter, type WebhookStorePort } from './webhooks.store'

export const HEARTBEAT_MS = 10_000
/** Events read per pull. */
const PAGE = 200
/** How often a connected stream's credential is checked again. */
const RECHECK_MS = 2_000
const LISTENER_RENEW_MS = 10 * 60_000

export interface StreamOptions {
  types?: readonly string[]
  linkIds?: readonly string[]
  lastEventId?: string | null
  /** The caller as the request's credential authenticates now; throws when it no longer does. */
  recheck: () => Promise<Caller>
  /** Ends the stream (the client went away). */
  signal?: AbortSignal
}

export function createLiveStream(deps: { store: WebhookStorePort; shortLinkOf: ShortLinkOf; log: Logger; now?: () => number; pollMs?: number }) {
  const { store } = deps
  const now = deps.now ?? Date.now
  const pollMs = deps.pollMs ?? 250
  const encoder = new TextEncoder()
  const open = new Set<() => void>()
  let waiters = new Set<() => void>()
  let lastTail: string | null = null
  let poller: ReturnType<typeof setInterval> | undefined

  const wakeAll = () => {
    const woken = waiters
    waiters = new Set()
    for (const fn of woken) fn()
  }
  onEventsAppended(wakeAll)
  /** Other processes' events (the click writer's thread, other nodes): one read of the tail per interval for all streams. */
  const watchTail = () => {
    poller ??= setInterval(async () => {
      if (open.size === 0) {
        clearInterval(poller)
        poller = undefined
        return
      }
      try {
        const tail = await store.tailPosition()
        if (tail !== lastTail) {
          lastTail = tail
          wakeAll()
        }
      } catch {
        // The store is away: the streams' own reads report it.
      }
    }, pollMs)
  }
  /** Resolves true when events may have arrived, false after `ms` without. */
  const nextChange = (ms: number) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        waiters.delete(done)
        resolve(false)
      }, ms)
      const done = () => {
        clearTimeout(timer)
        resolve(true)
      }
      waiters.add(done)
    })

  const frame = (text: string) => encoder.encode(text)
  const wantsClicks = (types?: readonly string[]) => !types?.length || types.includes('link.clicked')

  async function listen(caller: Caller) {
    const all = caller.role === 'admin'
    await store.touchListener(all ? 'all' : `user:${caller.userId}`, all ? null : caller.userId, now() + EVENT_RETENTION_MS)
  }

  return {
    /** The stream of events after `lastEventId` (or from now) for the caller's scope. */
    async open(caller: Caller, o: StreamOptions): Promise<ReadableStream<Uint8Array>> {
      let who = caller
      let position = o.lastEventId ? ((await store.positionOf(o.lastEventId)) ?? '') : await store.tailPosition()
      if (wantsClicks(o.types)) await listen(who)
      let listenedAt = now()
      let checkedAt = now()
      let lastSent = now()
      let closed = false
      let end: (() => void) | null = null
      const close = () => {
        closed = true
        open.delete(close)
        end?.()
        wakeAll()
      }
      open.add(close)
      o.signal?.addEventListener('abort', close)
      watchTail()
      const filter = (): EventFilter => ({ userId: who.role === 'admin' ? null : who.userId, types: o.types, linkIds: o.linkIds })

      return new ReadableStream<Uint8Array>(
        {
          start(controller) {
            end = () => {
              try {
                controller.close()
              } catch {
                // already closed
              }
            }
            controller.enqueue(frame(`retry: 2000\n: ${o.lastEventId ? 'resumed' : 'connected'}\n\n`))
          },
          async pull(controller) {
            while (!closed) {
              if (now() - checkedAt >= RECHECK_MS) {
                checkedAt = now()
                try {
                  who = await o.recheck()
                } catch {
                  return close()
                }
              }
              if (wantsClicks(o.types) && now() - listenedAt >= LISTENER_RENEW_MS) {
                listenedAt = now()
                await listen(who).catch(() => {})
              }
              let rows: Awaited<ReturnType<WebhookStorePort['readEvents']>> = []
              try {
                const tail = await store.tailPosition()
                if (tail !== position) {
                  rows = await store.readEvents(position, tail, filter(), PAGE)
                  position = rows.length === PAGE ? rows.at(-1)!.position : tail
                }
              } catch (e) {
                deps.log.warn('live events: the store could not be read; closing the stream', { error: String(e) })
                return close()
              }
              if (closed) return
              if (rows.length) {
                let text = ''
                for (const e of rows) text += `id: ${e.id}\nevent: ${e.type}\ndata: ${envelopeOf(e, deps.shortLinkOf)}\n\n`
                controller.enqueue(frame(text))
                lastSent = now()
                return
              }
              const quiet = HEARTBEAT_MS - (now() - lastSent)
              if (quiet <= 0 || !(await nextChange(Math.min(quiet, RECHECK_MS)))) {
                if (now() - lastSent >= HEARTBEAT_MS) {
                  controller.enqueue(frame(': keep-alive\n\n'))
                  lastSent = now()
                  return
                }
              }
            }
          },
          cancel: close,
        },
        { highWaterMark: 0 },
      )
    },
    /** Streams open now. */
    count: () => open.size,
    /** Events were committed elsewhere in this process (the click writer's thread): look now. */
    wake: wakeAll,
    /** Ends every stream (the server is stopping): clients reconnect elsewhere with Last-Event-ID. */
    closeAll() {
      for (const close of [...open]) close()
    },
  }
}
export type LiveStream = ReturnType<typeof createLiveStream>
