/**
 * wrk over HTTPS, as scripts/bench/redirect.ts runs it (two threads, a browser User-Agent so
 * every visit is a counted click, --latency), for benchmarks that drive several servers or
 * rotate over many paths. wrk does not verify certificates.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { $ } from 'bun'

export const BROWSER_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'
export const BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'

export interface WrkResult {
  rps: number
  p50ms: number
  p99ms: number
  /** Socket errors and non-2xx/3xx answers as wrk prints them, or 'none'. */
  errors: string
}

export interface WrkOptions {
  /** Origin and first path, e.g. https://localhost:8443/bench. */
  url: string
  seconds: number
  connections: number
  /** Rotate over these paths (each thread from its own start) instead of requesting `url`'s path only. */
  paths?: string[]
  ua?: string
  /** Pin wrk to these CPUs (taskset -c); unpinned when empty. */
  cpus?: string
}

const ms = (v: string) => (v.endsWith('us') ? Number.parseFloat(v) / 1000 : v.endsWith('ms') ? Number.parseFloat(v) : Number.parseFloat(v) * 1000)

/** A Lua script cycling wrk's requests over `paths`, written once per path list. */
const scripts = new Map<string, string>()
function rotationScript(paths: string[]): string {
  const key = paths.join('\n')
  let file = scripts.get(key)
  if (!file) {
    file = join(mkdtempSync(join(tmpdir(), 'shortlink-wrk-')), 'rotate.lua')
    writeFileSync(
      file,
      `local paths = { ${paths.map((p) => JSON.stringify(p)).join(', ')} }
local i = math.random(#paths)
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
`,
    )
    scripts.set(key, file)
  }
  return file
}

export async function wrk(o: WrkOptions): Promise<WrkResult> {
  const ua = `User-Agent: ${o.ua ?? BROWSER_UA}`
  const pin = o.cpus ? ['taskset', '-c', o.cpus] : []
  const script = o.paths?.length ? ['-s', rotationScript(o.paths)] : []
  const out = await $`${pin} wrk -t2 -c${o.connections} -d${o.seconds}s --latency -H ${ua} ${script} ${o.url}`.text()
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p50ms: ms(/\s50%\s+(\S+)/.exec(out)?.[1] ?? 'NaN'),
    p99ms: ms(/\s99%\s+(\S+)/.exec(out)?.[1] ?? 'NaN'),
    errors: [...out.matchAll(/Socket errors:.*|Non-2xx or 3xx responses: \d+/g)].map((m) => m[0]).join('; ') || 'none',
  }
}
