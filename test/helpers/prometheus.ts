/**
 * A real Prometheus (Debian's `prometheus` package) scraping given targets every second, its
 * storage in a temp dir, its API on a free loopback port; stopped by its process id.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './server'

export interface TestPrometheus {
  url: string
  /** The value of an instant query with one series, or null while it has none. */
  value(query: string): Promise<number | null>
  /** Every series of an instant query with its labels. */
  series(query: string): Promise<{ metric: Record<string, string>; value: number }[]>
  stop(): Promise<void>
}

export async function startPrometheus(targets: string[]): Promise<TestPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-prom-'))
  const port = await freePort()
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: shortlink\n    static_configs:\n      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]\n`,
  )
  const proc = Bun.spawn(
    ['prometheus', `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdout: 'ignore', stderr: 'pipe' },
  )
  let log = ''
  void (async () => {
    for await (const c of proc.stderr as ReadableStream<Uint8Array>) log += new TextDecoder().decode(c)
  })()
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  for (;;) {
    const ok = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) break
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`prometheus did not start:\n${log}`)
    await Bun.sleep(50)
  }
  const series = async (query: string) => {
    const r = (await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`)).json()) as {
      status: string
      error?: string
      data: { result: { metric: Record<string, string>; value: [number, string] }[] }
    }
    if (r.status !== 'success') throw new Error(`query ${query}: ${r.error}`)
    return r.data.result.map((s) => ({ metric: s.metric, value: Number(s.value[1]) }))
  }
  return {
    url,
    series,
    async value(query) {
      const s = await series(query)
      if (s.length > 1) throw new Error(`query ${query}: ${s.length} series, one expected`)
      return s[0]?.value ?? null
    },
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
