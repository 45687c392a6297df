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
  /** Responses wrk completed. */
  requests: number
  /** Responses per status, when the script counts them (`statuses 302:123 404:1` in its output). */
  statuses: Record<string, number> | null
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
  /** A Lua script of its own (instead of `paths`), e.g. distinctVisitsScript(). */
  script?: string
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
  const script = o.script ? ['-s', o.script] : o.paths?.length ? ['-s', rotationScript(o.paths)] : []
  const out = await $`${pin} wrk -t2 -c${o.connections} -d${o.seconds}s --latency -H ${ua} ${script} ${o.url}`.text()
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p50ms: ms(/\s50%\s+(\S+)/.exec(out)?.[1] ?? 'NaN'),
    p99ms: ms(/\s99%\s+(\S+)/.exec(out)?.[1] ?? 'NaN'),
    errors: [...out.matchAll(/Socket errors:.*|Non-2xx or 3xx responses: \d+/g)].map((m) => m[0]).join('; ') || 'none',
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    statuses: statusesOf(out),
  }
}

function statusesOf(out: string): Record<string, number> | null {
  const line = /^statuses (.*)$/m.exec(out)?.[1]
  if (line === undefined) return null
  return Object.fromEntries(
    line
      .split(' ')
      .filter(Boolean)
      .map((p) => [p.split(':')[0]!, Number(p.split(':')[1])]),
  )
}

/**
 * Lua for wrk scripts that count answers per status: numbers the threads (`id`, for seeding), counts
 * in each, and prints the totals as `statuses 302:N 404:M` (read back by `wrk()`). A script adds its
 * own init() and request().
 */
export const COUNT_STATUSES_LUA = `local threads = {}
local n = 0
function setup(thread) n = n + 1; thread:set("id", n); table.insert(threads, thread) end
statuses = {}
function response(status) statuses[status] = (statuses[status] or 0) + 1 end
function done()
  local total = {}
  for _, t in ipairs(threads) do for s, c in pairs(t:get("statuses")) do total[s] = (total[s] or 0) + c end end
  local parts = {}
  for s, c in pairs(total) do table.insert(parts, s .. ":" .. c) end
  io.write("statuses " .. table.concat(parts, " ") .. "\\n")
end
`

/**
 * Real traffic: every request carries its own Referer (a distinct page on one of 10,000 sites)
 * and its own client address in X-Forwarded-For (random public-looking IPv4, so geo lookups vary;
 * the server must trust the loopback proxy). Counts responses per status (printed as
 * `statuses 302:N ...`), so a benchmark can check that every counted visit was stored.
 */
export function distinctVisitsScript(path: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'shortlink-wrk-')), 'distinct.lua')
  writeFileSync(
    file,
    `${COUNT_STATUSES_LUA}local seq = 0
local path = ${JSON.stringify(path)}
function init(args) math.randomseed(os.time() * 1000 + id) end
function request()
  seq = seq + 1
  local ip = math.random(11, 223) .. "." .. math.random(0, 255) .. "." .. math.random(0, 255) .. "." .. math.random(1, 254)
  local ref = "https://site" .. math.random(1, 10000) .. ".example/page/" .. id .. "-" .. seq
  -- wrk.format takes these headers instead of wrk's (-H), so copy those in (the User-Agent decides what counts).
  local headers = { ["Referer"] = ref, ["X-Forwarded-For"] = ip }
  for k, v in pairs(wrk.headers) do headers[k] = v end
  return wrk.format("GET", path, headers)
end
`,
  )
  return file
}
