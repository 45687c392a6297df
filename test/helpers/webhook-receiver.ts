/**
 * A webhook receiver for tests: Bun.serve on loopback. Every delivery is checked with the
 * Standard Webhooks reference library (npm `standardwebhooks`), never with the code that
 * signs; a delivery that does not verify is counted apart. `answer` decides each reply (fail
 * some on purpose, hang, redirect); arrivals are kept in order with their attempt number per
 * event id, so duplicates can be counted.
 */
import { Webhook } from 'standardwebhooks'

export interface Arrival {
  /** The event id (webhook-id). */
  id: string
  type: string
  envelope: { id: string; type: string; createdAt: string; data: any }
  headers: Record<string, string>
  path: string
  /** When it arrived (ms). */
  at: number
  /** 1 for the first arrival of this event id, 2 for the second… */
  attempt: number
  /** The status answered. */
  answered: number
}

export type Answer = number | 'hang' | Response

export interface Receiver {
  url(path?: string): string
  port: number
  /** Signing secret per path (`/` by default), set once a webhook is created. */
  secrets: Map<string, string>
  /** Every request, verified or not, in arrival order. */
  arrivals: Arrival[]
  /** Requests whose signature did not verify. */
  unverified: { path: string; reason: string }[]
  answer: (a: { id: string; attempt: number; path: string; envelope: Arrival['envelope'] }) => Answer | Promise<Answer>
  /** Distinct event ids answered 2xx. */
  delivered(): Set<string>
  /** Event ids that arrived more than once after a 2xx answer. */
  duplicates(): string[]
  stop(): void
}

export function startReceiver(): Receiver {
  const seen = new Map<string, number>()
  const okOnce = new Map<string, number>()
  const hanging = new Set<() => void>()
  const r: Receiver = {
    url: (path = '/') => `http://127.0.0.1:${server.port}${path}`,
    port: 0,
    secrets: new Map(),
    arrivals: [],
    unverified: [],
    answer: () => 204,
    delivered: () => new Set([...okOnce.keys()]),
    duplicates: () => [...okOnce].filter(([, n]) => n > 1).map(([id]) => id),
    stop() {
      for (const release of hanging) release()
      server.stop(true)
    },
  }
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 30,
    async fetch(request) {
      const path = new URL(request.url).pathname
      const body = await request.text()
      const headers = Object.fromEntries(request.headers)
      const secret = r.secrets.get(path) ?? r.secrets.get('/')
      let envelope: Arrival['envelope']
      try {
        if (!secret) throw new Error(`no secret for ${path}`)
        envelope = new Webhook(secret).verify(body, headers) as Arrival['envelope']
      } catch (e) {
        r.unverified.push({ path, reason: String(e) })
        return new Response('bad signature', { status: 400 })
      }
      const id = headers['webhook-id']!
      const attempt = (seen.get(id) ?? 0) + 1
      seen.set(id, attempt)
      const arrival: Arrival = { id, type: envelope.type, envelope, headers, path, at: Date.now(), attempt, answered: 0 }
      r.arrivals.push(arrival)
      const a = await r.answer({ id, attempt, path, envelope })
      if (a === 'hang') {
        arrival.answered = -1
        await new Promise<void>((resolve) => hanging.add(resolve))
        return new Response('late', { status: 200 })
      }
      const res = a instanceof Response ? a : new Response(null, { status: a })
      arrival.answered = res.status
      if (res.status >= 200 && res.status < 300) okOnce.set(id, (okOnce.get(id) ?? 0) + 1)
      return res
    },
  })
  r.port = server.port!
  return r
}
