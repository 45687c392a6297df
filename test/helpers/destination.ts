/**
 * A destination server for link-health tests: real HTTP on loopback, each path switched at will
 * between answers (up, down, gone, hanging, a HEAD-refusing server with an endless body,
 * redirects), every request it gets recorded (method, path, User-Agent, time).
 */
import type { Server } from 'bun'

export type Behaviour =
  | 'up'
  | 'down' // 503
  | 'gone' // 410
  | 'missing' // 404
  | 'forbidden' // 403: a server that is up
  | 'hang' // never answers
  | 'head-refused' // HEAD 405, GET 200 with an endless body
  | { redirect: string; status?: number }
  | { heldUntil: Promise<unknown>; after: Behaviour } // answers as `after` once the test lets it

export interface SeenRequest {
  method: string
  path: string
  userAgent: string | null
  at: number
}

export interface Destination {
  /** `http://<host>:<port>` */
  origin: string
  port: number
  set(path: string, behaviour: Behaviour): void
  requests(path?: string): SeenRequest[]
  /** Bytes of endless bodies sent so far. */
  bodyBytes(): number
  stop(): void
}

export function startDestination(hostname = '127.0.0.1'): Destination {
  const behaviours = new Map<string, Behaviour>()
  const seen: SeenRequest[] = []
  let bodyBytes = 0
  const chunk = new Uint8Array(64 * 1024).fill(120)
  const server: Server<unknown> = Bun.serve({
    hostname,
    port: 0,
    idleTimeout: 0,
    fetch(request) {
      const url = new URL(request.url)
      seen.push({ method: request.method, path: url.pathname, userAgent: request.headers.get('user-agent'), at: Date.now() })
      return answer(request, behaviours.get(url.pathname) ?? 'up')
    },
  })
  function answer(request: Request, b: Behaviour): Response | Promise<Response> {
    if (b === 'hang') return new Promise<Response>(() => {})
    if (b === 'down') return new Response('down', { status: 503 })
    if (b === 'gone') return new Response('gone', { status: 410 })
    if (b === 'missing') return new Response('missing', { status: 404 })
    if (b === 'forbidden') return new Response('no', { status: 403 })
    if (b === 'head-refused') {
      if (request.method === 'HEAD') return new Response(null, { status: 405 })
      return new Response(
        new ReadableStream({
          pull(controller) {
            bodyBytes += chunk.length
            controller.enqueue(chunk)
          },
        }),
        { headers: { 'content-type': 'application/octet-stream' } },
      )
    }
    if (typeof b === 'object' && 'heldUntil' in b) return b.heldUntil.then(() => answer(request, b.after))
    if (typeof b === 'object') return new Response(null, { status: b.status ?? 302, headers: { location: b.redirect } })
    return new Response('ok')
  }
  return {
    origin: `http://${hostname}:${server.port}`,
    port: server.port!,
    set: (path, behaviour) => behaviours.set(path, behaviour),
    requests: (path) => seen.filter((r) => path === undefined || r.path === path),
    bodyBytes: () => bodyBytes,
    stop: () => server.stop(true),
  }
}
