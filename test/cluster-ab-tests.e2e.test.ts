/**
 * A/B tests on three nodes of the binary on one PostgreSQL (started by this file on loopback):
 * visits through every node record their variant (each node's click writer), the test is
 * judged once (one node holds the `ab-test-verdicts` lease; the verdict's key would refuse a
 * second), the winner promoted on every node's redirect, and `link.test_completed` and the
 * promotion's `link.updated` reach a webhook receiver once each. Leads per variant are reported
 * with POST /track/lead on the `sl_id` of real visits, through every node (each lead carries its
 * click's variant, found by its click id in `tracked_clicks`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Cluster, startCluster } from './helpers/cluster'
import { landingOf } from './helpers/landing'
import { until } from './helpers/poll'
import { json, queryStore, type TestServer } from './helpers/server'
import { type Receiver, startReceiver } from './helpers/webhook-receiver'

const ADMIN_KEY = 'sk_ab_cluster_admin_key_0123456789abc'
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'
const A = 'https://a.example/'
const B = 'https://b.example/'

let cluster: Cluster
let storeUrl: string
let nodes: TestServer[] = []
let receiver: Receiver

beforeAll(async () => {
  receiver = startReceiver()
  cluster = await startCluster({
    database: 'ab_cluster',
    adminKey: ADMIN_KEY,
    toml: '[limits]\napiPerMinute = 100000\n[webhooks]\nallowPrivateNetworks = true\n',
  })
  ;({ nodes, storeUrl } = cluster)
})

afterAll(async () => {
  receiver?.stop()
  await cluster?.stop()
}, 60_000)

/** The same short link served by `node` (each node has its own port). */
const on = (node: TestServer, shortLink: string) => shortLink.replace(/:\d+\//, `:${node.httpsPort}/`)

describe('A/B tests on three nodes', () => {
  test('visits on every node counted per variant; judged once, the winner promoted everywhere, announced once', async () => {
    const [a] = nodes as [TestServer]
    const hook = await json(await a.api('/webhooks', { method: 'POST', json: { url: receiver.url('/ab'), events: ['link.test_completed', 'link.updated'] } }))
    expect(hook.status).toBe(200)
    receiver.secrets.set('/ab', hook.body.secret)
    const made = await json(
      await a.api('/links/link', {
        method: 'POST',
        json: {
          data: { url: 'https://plain.example/' },
          linkOptions: {
            key: 'abc',
            trackConversion: true,
            testVariants: [
              { url: A, percentage: 50 },
              { url: B, percentage: 50 },
            ],
            testCompletedAt: new Date(Date.now() + 3600_000).toISOString(),
          },
        },
      }),
    )
    expect(made.status).toBe(200)
    const { id, shortLink } = made.body as { id: string; shortLink: string }
    const [stored] = await queryStore<{ seq: number; started: number }>(
      { dataDir: '', storeUrl },
      `SELECT seq::float8 AS seq, (options::jsonb ->> 'testStartedAt')::float8 AS started FROM links WHERE id = '${id}'`,
    )
    const { seq, started } = stored!
    // 60 visits per variant, 20 through each node, each visitor holding its variant's cookie; each visit's click id kept.
    const clickIds: string[][] = [[], []]
    for (const node of nodes)
      for (const variant of [0, 1])
        for (let i = 0; i < 20; i++) {
          const r = await node.fetch(on(node, shortLink), { headers: { 'user-agent': BROWSER_UA, cookie: `sl_variant=${started}.${variant}` } })
          const { url, clickId } = landingOf(r.headers.get('location'))
          clickIds[variant]!.push(clickId!)
          expect(url).toBe(variant === 0 ? A : B)
        }
    // Each node writes its visits within its flush window (the sentinel of clicksFlushed is per store, not per node).
    await until(
      'every visit stored',
      async () => (await json(await a.api(`/links/${id}`))).body.clicks,
      (n) => n === 120,
    )
    // Leads: 3 of variant 0's visits, 30 of variant 1's, each reported to the next node in turn.
    const leadClicks = [...clickIds[0]!.slice(0, 3), ...clickIds[1]!.slice(0, 30)]
    for (const [i, clickId] of leadClicks.entries()) {
      const node = nodes[i % nodes.length]!
      const lead = await node.api('/track/lead', { method: 'POST', json: { clickId, eventName: 'Sign up', customerExternalId: `c${i}` } })
      expect(lead.status).toBe(200)
    }
    const running = (await json(await nodes[1]!.api(`/links/${id}/test`))).body
    expect(running.variants.map((v: { clicks: number; leads: number }) => [v.clicks, v.leads])).toEqual([
      [60, 3],
      [60, 30],
    ])

    expect((await a.api(`/links/${id}`, { method: 'PATCH', json: { linkOptions: { testCompletedAt: new Date().toISOString() } } })).status).toBe(200)
    const judged = await until(
      'the verdict',
      async () => (await json(await nodes[2]!.api(`/links/${id}/test`))).body,
      (b) => b.status !== 'running',
      15_000,
    )
    expect(judged).toMatchObject({ status: 'completed', winner: 1 })
    // Every node's redirect sends plain visitors to the winner (the promotion reached their caches).
    for (const node of nodes)
      await until(
        'the winner on every node',
        async () => landingOf((await node.fetch(on(node, shortLink), { headers: { 'user-agent': BROWSER_UA } })).headers.get('location')).url,
        (l) => l === B,
      )
    const completed = await until(
      'link.test_completed',
      async () => receiver.arrivals.filter((x) => x.type === 'link.test_completed'),
      (l) => l.length > 0,
    )
    const promoted = await until(
      'the promotion',
      async () => receiver.arrivals.filter((x) => x.type === 'link.updated' && x.envelope.data.destination === B),
      (l) => l.length > 0,
    )
    expect(completed).toHaveLength(1)
    expect(promoted).toHaveLength(1)
    expect(receiver.duplicates()).toEqual([])
    expect(receiver.unverified).toEqual([])
    const verdicts = await queryStore<{ n: number }>({ dataDir: '', storeUrl }, `SELECT count(*)::int AS n FROM link_tests WHERE link_seq = ${seq}`)
    expect(verdicts[0]!.n).toBe(1)
    // One node led: the lease names one of them.
    const [lease] = await queryStore<{ holder: string }>({ dataDir: '', storeUrl }, "SELECT holder FROM locks WHERE key = 'ab-test-verdicts'")
    expect(nodes.map((n) => n.proc.pid)).toContain(Number(/:(\d+)#/.exec(lease?.holder ?? '')?.[1]))
    // The nodes went on looking after the verdict: still one announcement.
    expect(receiver.arrivals.filter((x) => x.type === 'link.test_completed')).toHaveLength(1)
  })
})
