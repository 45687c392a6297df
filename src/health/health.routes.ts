import { Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import type { Readiness } from './readiness'

/** Paths (under the API prefix) answered without authentication, rate limits or the store. */
export const HEALTH_PATHS = ['/healthz', '/readyz']

const Status = t.Object({ status: t.Union([t.Literal('ok'), t.Literal('unavailable')], { description: '`ok`, or `unavailable` (readyz only)' }) })
const Ready = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('unavailable')]),
  checks: t.Record(t.String(), t.Union([t.Literal('ok'), t.Literal('failing')]), {
    description: 'Each part of the node by name (`store`, `migrations`, `listeners`, ...): `ok` or `failing`.',
  }),
})

const NO_STORE = { 'cache-control': 'no-store' }

export function healthRoutes(readiness: Readiness) {
  return new Elysia({ name: 'health', normalize: false })
    .get(
      '/healthz',
      ({ set }) => {
        set.headers['cache-control'] = 'no-store'
        return { status: 'ok' as const }
      },
      {
        response: { 200: Status },
        detail: {
          tags: ['Operation'],
          summary: 'Liveness',
          description: 'Answers 200 `{ "status": "ok" }` while the process serves requests. No authentication.',
          security: [],
        },
      },
    )
    .get(
      '/readyz',
      async () => {
        const { ready, checks } = await readiness.report()
        return Response.json({ status: ready ? 'ok' : 'unavailable', checks }, { status: ready ? 200 : 503, headers: NO_STORE })
      },
      {
        response: { 200: Ready, 503: Ready },
        detail: {
          tags: ['Operation'],
          summary: 'Readiness',
          description:
            'Answers 200 when the store is reachable, the migrations are done and the listeners are up; otherwise 503 with the same body, the failing parts marked. It turns back to 200 by itself once they recover. No authentication.',
          security: [],
        },
      },
    )
}
