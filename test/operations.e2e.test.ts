/**
 * Operation of a node, as its operator sees it: the health URLs on the API host, and the
 * metrics read back from a real Prometheus scraping the server's own metrics listener (never
 * a public port), with bounded label sets however many keys visitors try.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { until } from './helpers/poll'
import { startPrometheus, type TestPrometheus } from './helpers/prometheus'
import { freePort, json, onPostgres, startServer, type TestServer } from './helpers/server'

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'

let server: TestServer
let prometheus: TestPrometheus
let metricsPort: number

beforeAll(async () => {
  metricsPort = await freePort()
  server = await startServer({ toml: `\n[metrics]\nlisten = "127.0.0.1:${metricsPort}"\n` })
  prometheus = await startPrometheus([`127.0.0.1:${metricsPort}`])
})

/** The listener's samples now, by name and labels as printed. */
async function scrapeNow(): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    const m = /^(\S+) (\S+)$/.exec(line)
    if (m && !line.startsWith('#')) out.set(m[1]!, Number(m[2]))
  }
  return out
}

afterAll(async () => {
  await prometheus?.stop()
  await server?.stop()
})

describe('health', () => {
  test('liveness and readiness answer without credentials, and show no internals', async () => {
    for (const key of [null, 'sk_not_a_key']) {
      expect(await json(await server.api('/healthz', { key }))).toEqual({ status: 200, body: { status: 'ok' } })
      const ready = await server.api('/readyz', { key })
      expect(ready.headers.get('cache-control')).toBe('no-store')
      expect(await json(ready)).toEqual({ status: 200, body: { status: 'ok', checks: { store: 'ok', listeners: 'ok', clickWriter: 'ok' } } })
    }
    // Only under the API's path on the API host: a short domain's /healthz is a short link like any other.
    expect((await server.fetch(`https://localhost:${server.httpsPort}/healthz`)).status).toBe(404)
  })

  test('the OpenAPI document describes both', async () => {
    const doc = (await (await server.api('/openapi.json', { key: null })).json()) as { paths: Record<string, unknown> }
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz']))
  })
})

describe('metrics', () => {
  test('are served on their own listener only, never on the public ports', async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    expect(text).toContain('# TYPE shortlink_redirect_duration_seconds histogram')
    for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) expect(line).toStartWith('shortlink_')
    const onHttps = await server.fetch(`https://localhost:${server.httpsPort}/metrics`)
    expect(onHttps.status).toBe(404)
    expect(await onHttps.text()).not.toContain('shortlink_')
    expect((await server.api('/metrics')).status).toBe(404)
    expect((await fetch(`http://127.0.0.1:${server.httpPort}/metrics`, { redirect: 'manual' })).status).toBe(301)
  })

  test('a config putting them on a public port is refused before anything starts', async () => {
    const checked = await server.run(['check'])
    expect(checked.code).toBe(0)
    const p = Bun.spawn([...(await import('./helpers/server')).shortlinkCommand(), 'check'], {
      env: { ...process.env, SHORTLINK_METRICS_LISTEN: `127.0.0.1:${server.httpsPort}`, SHORTLINK_SERVER_HTTPSPORT: String(server.httpsPort) },
      stderr: 'pipe',
      stdout: 'pipe',
    })
    expect(await p.exited).toBe(2)
    expect(await new Response(p.stderr).text()).toContain('metrics.listen: must not be one of the public ports')
  })

  test('Prometheus reads what visitors and callers did: requests by route and status, latency, cache, clicks, the store, memory, certificates', async () => {
    // What earlier tests counted (a short domain's /healthz and /metrics were 404s too), read from the listener itself.
    const before = await scrapeNow()
    const was = (sample: string) => before.get(sample) ?? 0
    const made = (await (
      await server.api('/links/link', { method: 'POST', json: { data: { url: 'https://example.com/m' }, linkOptions: { key: 'metered' } } })
    ).json()) as {
      shortLink: string
    }
    const visits = 40
    for (let i = 0; i < visits; i++) expect((await server.fetch(made.shortLink, { headers: { 'user-agent': BROWSER_UA } })).status).toBe(302)
    // Visitors trying keys that do not exist: one 404 series however many keys, no per-key label.
    const probes = 60
    for (let i = 0; i < probes; i++) expect((await server.fetch(`https://localhost:${server.httpsPort}/nope-${i}-${crypto.randomUUID()}`)).status).toBe(404)

    const redirects = '{job="shortlink",route="redirect"}'
    const sent302 = was('shortlink_http_requests_total{route="redirect",status="302"}') + visits
    const sent404 = was('shortlink_http_requests_total{route="redirect",status="404"}') + probes
    expect(
      await until(
        '302s scraped',
        () => prometheus.value(`shortlink_http_requests_total{route="redirect",status="302"}`),
        (v) => v === sent302,
      ),
    ).toBe(sent302)
    expect(
      await until(
        '404s scraped',
        () => prometheus.value(`shortlink_http_requests_total{route="redirect",status="404"}`),
        (v) => v === sent404,
      ),
    ).toBe(sent404)
    expect((await prometheus.series(`shortlink_http_requests_total${redirects}`)).map((s) => s.metric.status).sort()).toEqual(['302', '404'])
    expect(await prometheus.value('shortlink_redirect_duration_seconds_count')).toBe(sent302 + sent404)
    expect(await prometheus.value('shortlink_redirect_duration_seconds_bucket{le="+Inf"}')).toBe(sent302 + sent404)
    const p99 = await prometheus.value('histogram_quantile(0.99, shortlink_redirect_duration_seconds_bucket)')
    expect(p99).toBeGreaterThan(0)
    expect(await prometheus.value('shortlink_http_requests_total{route="/api/links/:type",status="200"}')).toBe(1)
    expect(await prometheus.value('shortlink_clicks_recorded_total')).toBe(visits)
    expect(
      await until(
        'clicks written',
        () => prometheus.value('shortlink_clicks_written_total'),
        (v) => v === visits,
      ),
    ).toBe(visits)
    expect(
      await until(
        'clicks pending',
        () => prometheus.value('shortlink_clicks_pending'),
        (v) => v === 0,
      ),
    ).toBe(0)
    expect(await prometheus.value('shortlink_clicks_dropped_total')).toBe(0)
    // The first visit read the store; the others were answered from memory; unknown keys each read it once.
    expect(await prometheus.value('shortlink_link_cache_hits_total')).toBeGreaterThanOrEqual(visits - 1)
    expect(await prometheus.value('shortlink_link_cache_misses_total')).toBeGreaterThanOrEqual(probes + 1)
    expect(await prometheus.value('shortlink_store_up')).toBe(1)
    expect(await prometheus.value('shortlink_ready')).toBe(1)
    expect(await prometheus.value('shortlink_process_resident_memory_bytes')).toBeGreaterThan(10 * 2 ** 20)
    expect(await prometheus.value('shortlink_backup_last_success_timestamp_seconds')).toBe(0)
    const cert = new X509Certificate(readFileSync(`${server.dir}/data/tls/cert.pem`))
    expect(await prometheus.value('shortlink_certificate_expiry_timestamp_seconds{domain="localhost"}')).toBe(Math.floor(Date.parse(cert.validTo) / 1000))
    expect(await prometheus.value('up{job="shortlink"}')).toBe(1)
    const scrape = await prometheus.value('scrape_duration_seconds{job="shortlink"}')
    console.log(
      `scrape of the node's metrics by Prometheus: ${((scrape ?? 0) * 1000).toFixed(2)} ms, ${await prometheus.value('scrape_samples_scraped{job="shortlink"}')} samples`,
    )
    expect(scrape).toBeLessThan(0.9)
  })

  test("the backup command: through this server on SQLite; on PostgreSQL it says backups are pg_dump's", async () => {
    const r = await server.run(['backup', `${server.dir}/by-command.tar.zst`])
    if (onPostgres()) {
      expect(r.code).toBe(1)
      expect(r.stderr).toContain('pg_dump')
      return
    }
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('taken by the running server')
    expect(
      await until(
        'the last backup scraped',
        () => prometheus.value('shortlink_backup_last_success_timestamp_seconds'),
        (v) => (v ?? 0) > 0,
      ),
    ).toBeGreaterThan(Date.now() / 1000 - 120)
    expect(await prometheus.value('shortlink_backups_total{result="ok"}')).toBe(1)
  })
})
