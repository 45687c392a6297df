/**
 * A client generated from the document the binary serves: openapi-typescript writes the
 * types of `/openapi.json` (test/helpers/openapi-types.ts), a small program calls every webhook and live-event endpoint through
 * openapi-fetch with those types, the TypeScript compiler checks it against them (a request or
 * a field the document gets wrong fails here), and then it runs against the server.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { writeOpenApiTypes } from './helpers/openapi-types'
import { startServer, type TestServer } from './helpers/server'
import { type Receiver, startReceiver } from './helpers/webhook-receiver'

const ROOT = resolve(import.meta.dir, '..')
/** Inside the repository, so the program resolves openapi-fetch from node_modules. */
const DIR = join(ROOT, 'test-artifacts/openapi-client')

let server: TestServer
let receiver: Receiver
beforeAll(async () => {
  receiver = startReceiver()
  server = await startServer({ toml: '[webhooks]\nallowPrivateNetworks = true\n' })
})
afterAll(async () => {
  receiver?.stop()
  await server?.stop()
})

const PROGRAM = `import createClient from 'openapi-fetch'
import type { paths } from './schema'

/** Calls every endpoint of webhooks and live events through the generated types. */
export async function callEveryWebhookEndpoint(baseUrl: string, key: string, receiverUrl: string, ca: string) {
  const client = createClient<paths>({
    baseUrl,
    headers: { authorization: \`Bearer \${key}\` },
    fetch: (request: Request) => fetch(request, { tls: { ca } } as RequestInit),
  })
  const created = await client.POST('/webhooks', { body: { url: receiverUrl, events: ['link.created', 'webhook.test'], name: 'typed' } })
  if (!created.data) throw new Error(\`create: \${created.response.status}\`)
  const id: string = created.data.id
  const secret: string = created.data.secret
  const listed = await client.GET('/webhooks', { params: { query: { page: 1, pageSize: 50 } } })
  const one = await client.GET('/webhooks/{id}', { params: { path: { id } } })
  const patched = await client.PATCH('/webhooks/{id}', { params: { path: { id } }, body: { name: 'typed client', tagIds: [] } })
  const tested = await client.POST('/webhooks/{id}/test', { params: { path: { id } } })
  if (!tested.data) throw new Error(\`test: \${tested.response.status}\`)
  const eventId: string = tested.data.eventId
  const deliveries = await client.GET('/webhooks/{id}/deliveries', { params: { path: { id }, query: { pageSize: 10 } } })
  const retried = await client.POST('/webhooks/{id}/deliveries/{eventId}/retry', { params: { path: { id, eventId } } })
  const events = await client.GET('/events', { params: { query: { types: ['webhook.test'] } }, parseAs: 'stream' })
  const reader = events.response.body!.getReader()
  const first = new TextDecoder().decode((await reader.read()).value)
  await reader.cancel()
  const missing = await client.GET('/webhooks/{id}', { params: { path: { id: 'whk_missing' } } })
  const removed = await client.DELETE('/webhooks/{id}', { params: { path: { id } } })
  return {
    secret,
    created: created.data,
    listed: listed.data?.map((w) => w.id) ?? [],
    one: one.data?.name ?? null,
    patched: patched.data?.name ?? null,
    tested: tested.data.status,
    deliveries: deliveries.data?.map((d) => [d.eventId, d.type, d.status]) ?? [],
    retried: retried.data?.nextAttemptAt ?? null,
    eventsStatus: events.response.status,
    eventsType: events.response.headers.get('content-type'),
    firstChunk: first,
    missing: missing.error?.code ?? null,
    removed: removed.data?.id ?? null,
  }
}
`

test('a client generated from the served document calls every webhook and live-event endpoint, type-checked against it', async () => {
  const served = await server.fetch(`${server.baseUrl}/openapi.json`)
  expect(served.status).toBe(200)
  const document = await served.json()
  mkdirSync(DIR, { recursive: true })
  await writeOpenApiTypes(document, join(DIR, 'schema.d.ts'))
  writeFileSync(join(DIR, 'client.ts'), PROGRAM)
  writeFileSync(
    join(DIR, 'tsconfig.json'),
    JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { lib: ['ESNext', 'DOM'], noUnusedLocals: true }, include: ['.'], exclude: [] }),
  )
  const tsc = Bun.spawn([join(ROOT, 'node_modules/.bin/tsc'), '--noEmit', '-p', DIR], { stdout: 'pipe', stderr: 'pipe', cwd: ROOT })
  const [out, err] = await Promise.all([new Response(tsc.stdout).text(), new Response(tsc.stderr).text()])
  expect(`${await tsc.exited} ${out}${err}`.trim()).toBe('0')

  const { callEveryWebhookEndpoint } = await import(join(DIR, 'client.ts'))
  const r = await callEveryWebhookEndpoint(server.baseUrl, server.adminKey, receiver.url('/typed'), server.ca)
  expect(r.secret).toMatch(/^whsec_/)
  expect(r.created).toMatchObject({ url: receiver.url('/typed'), events: ['link.created', 'webhook.test'], name: 'typed', disabled: false })
  expect(r.listed).toContain(r.created.id)
  expect([r.one, r.patched]).toEqual(['typed', 'typed client'])
  expect(r.tested).toBe('pending')
  expect(r.deliveries[0]).toEqual([expect.stringMatching(/^evt_/), 'webhook.test', expect.any(String)])
  expect(typeof r.retried).toBe('string')
  expect([r.eventsStatus, r.eventsType]).toEqual([200, 'text/event-stream; charset=utf-8'])
  expect(r.firstChunk).toContain(': connected')
  expect(r.missing).toBe('not_found')
  expect(r.removed).toBe(r.created.id)
})
