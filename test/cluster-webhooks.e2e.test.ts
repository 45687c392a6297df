/**
 * Webhooks on three nodes of the binary sharing one PostgreSQL (started here, loopback):
 * events made through every node (links created, visits counted) reach a receiver started
 * here exactly once each, verified with the Standard Webhooks reference library; then one
 * node dies by kill -9 in the middle of a backlog and every event still arrives (at least once:
 * what it had in flight may come twice, counted and bounded).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Cluster, startCluster } from './helpers/cluster'
import { until } from './helpers/poll'
import { json, type TestServer } from './helpers/server'
import { type Receiver, startReceiver } from './helpers/webhook-receiver'

const ADMIN_KEY = 'sk_webhook_cluster_admin_key_0123456789'
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'

let cluster: Cluster
let nodes: TestServer[] = []
let receiver: Receiver

beforeAll(async () => {
  receiver = startReceiver()
  cluster = await startCluster({
    database: 'webhooks_cluster',
    adminKey: ADMIN_KEY,
    toml: '[limits]\napiPerMinute = 100000\n[webhooks]\nallowPrivateNetworks = true\n',
  })
  nodes = cluster.nodes
})

afterAll(async () => {
  receiver?.stop()
  await cluster?.stop()
}, 60_000)

/** Runs `jobs` with at most `width` at once. */
async function inParallel(width: number, jobs: (() => Promise<unknown>)[]) {
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) await jobs[next++]!()
    }),
  )
}

describe('webhooks on three nodes', () => {
  test('1,000 events made through three nodes: each delivered exactly once', async () => {
    const [a] = nodes as [TestServer]
    const made = (await json(await a.api('/webhooks', { method: 'POST', json: { url: receiver.url('/c'), events: ['link.created', 'link.clicked'] } }))).body
    receiver.secrets.set('/c', made.secret)
    const links: { id: string; shortLink: string }[] = []
    await inParallel(
      10,
      Array.from({ length: 100 }, (_, i) => async () => {
        const r = await nodes[i % 3]!.api('/links/link', { method: 'POST', json: { data: { url: `https://c${i}.example/` }, linkOptions: { key: `c${i}` } } })
        expect(r.status).toBe(200)
        links.push((await r.json()) as { id: string; shortLink: string })
      }),
    )
    // 900 visits, spread over the nodes (identical visitors merge into rows of n visits: each is an event).
    await inParallel(
      30,
      Array.from({ length: 900 }, (_, i) => async () => {
        const node = nodes[i % 3]!
        const link = links[i % 100]!
        const url = link.shortLink.replace(/:\d+\//, `:${node.httpsPort}/`)
        const r = await node.fetch(url, { headers: { 'user-agent': BROWSER_UA } })
        expect(r.status).toBe(302)
      }),
    )
    await until(
      '1,000 events delivered',
      async () => receiver.delivered().size,
      (n) => n >= 1000,
      120_000,
    )
    expect(receiver.unverified).toEqual([])
    expect(receiver.duplicates()).toEqual([])
    expect(receiver.arrivals.filter((x) => x.type === 'link.clicked').length).toBe(900)
    expect(receiver.arrivals.length).toBe(1000)
    expect((await a.api(`/webhooks/${made.id}`, { method: 'DELETE' })).status).toBe(200)
  })

  test('a node killed in the middle of a backlog: the others deliver every event; only what it had in flight may come twice', async () => {
    const r = startReceiver()
    try {
      const [a, b] = nodes as [TestServer, TestServer]
      const made = (await json(await a.api('/webhooks', { method: 'POST', json: { url: r.url('/k'), events: ['link.created'] } }))).body
      r.secrets.set('/k', made.secret)
      // A slow receiver (200 ms an answer): a backlog builds up and every node has attempts open.
      r.answer = async () => {
        await Bun.sleep(200)
        return 200
      }
      await inParallel(
        10,
        Array.from({ length: 600 }, (_, i) => async () => {
          const res = await nodes[i % 3]!.api('/links/link', {
            method: 'POST',
            json: { data: { url: `https://k${i}.example/` }, linkOptions: { key: `k${i}` } },
          })
          expect(res.status).toBe(200)
        }),
      )
      await until(
        'some delivered',
        async () => r.delivered().size,
        (n) => n >= 100,
        60_000,
      )
      b.proc.kill('SIGKILL')
      await b.proc.exited
      expect(r.delivered().size).toBeLessThan(600)
      await until(
        'all 600 delivered',
        async () => r.delivered().size,
        (n) => n >= 600,
        120_000,
      )
      expect(r.unverified).toEqual([])
      expect(r.duplicates().length).toBeLessThanOrEqual(16)
      expect((await a.api(`/webhooks/${made.id}`, { method: 'DELETE' })).status).toBe(200)
    } finally {
      r.stop()
    }
  })
})
