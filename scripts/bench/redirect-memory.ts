/**
 * Server memory (RSS) under redirect load, with wrk over HTTPS on loopback. Usage:
 *   bun scripts/bench/redirect-memory.ts [--rounds 3] [--seconds 8] [--connections 64]
 *     [--mode visits|attack|both] [--compare /path/to/other/checkout] [--key-bytes 8000] [--ua-bytes 8000]
 *     [--bin dist/shortlink] [--compare-bin /path/to/other/shortlink]
 * --bin / --compare-bin: measure built binaries (what is deployed) instead of `bun src/main.ts` of a checkout.
 * visits: a browser User-Agent on one short link, so every request is a counted click.
 * attack: no API key, every request a random key and a random User-Agent of the given sizes (together
 *   under the ~16 KB Bun accepts for a request head; beyond it Bun answers 431 itself).
 * For each run: RSS when idle, the peak during load (sampled every 200 ms), and 10 s after.
 * With --compare, runs alternate between that checkout (A) and this one (B); min/median/max per variant.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { $ } from 'bun'
import { arg } from './args'
import { rssMb, startBenchServer } from './redirect-server'
import { COUNT_STATUSES_LUA } from './wrk'

const rounds = Number(arg('rounds', '3'))
const seconds = Number(arg('seconds', '8'))
const connections = Number(arg('connections', '64'))
const mode = arg('mode', 'both')
const compare = arg('compare', '')
const bin = arg('bin', '')
const compareBin = arg('compare-bin', '')
const keyBytes = Number(arg('key-bytes', '8000'))
const uaBytes = Number(arg('ua-bytes', '8000'))
const HERE = resolve(import.meta.dir, '../..')
const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'

if (!Bun.which('wrk')) throw new Error('wrk is needed: apt-get install wrk')

// Random key and User-Agent per request: a fixed filler with a random 16-character head,
// so each one is new to every cache without Lua building 16 KB strings per request.
// Status counts come back through thread:get so a proxy limit (431/414) shows up.
const scriptDir = mkdtempSync(join(tmpdir(), 'shortlink-wrk-'))
const ATTACK_LUA = join(scriptDir, 'attack.lua')
writeFileSync(
  ATTACK_LUA,
  `${COUNT_STATUSES_LUA}local chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
local function head() local t = {} for i = 1, 16 do local r = math.random(1, #chars) t[i] = chars:sub(r, r) end return table.concat(t) end
local keyFill, uaFill
function init(args) math.randomseed(os.time() * 1000 + id); keyFill = string.rep("k", ${keyBytes} - 16); uaFill = string.rep("u", ${uaBytes} - 16) end
function request() return wrk.format("GET", "/" .. head() .. keyFill, { ["User-Agent"] = head() .. uaFill }) end
`,
)

interface Run {
  idle: number
  peak: number
  after: number
  rps: number
  statuses: string
}

async function measure(root: string, kind: 'visits' | 'attack', binary?: string): Promise<Run> {
  const server = await startBenchServer({ root, bin: binary || undefined })
  try {
    await Bun.sleep(2000) // let start-up work settle
    const idle = rssMb(server.pid)
    let peak = idle
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 200)
    const base = `https://localhost:${server.httpsPort}`
    const out =
      kind === 'visits'
        ? await $`wrk -t2 -c${connections} -d${seconds}s -H ${`User-Agent: ${BROWSER}`} ${`${base}/bench`}`.text()
        : await $`wrk -t2 -c${connections} -d${seconds}s -s ${ATTACK_LUA} ${base}`.text()
    clearInterval(sampler)
    peak = Math.max(peak, rssMb(server.pid))
    await Bun.sleep(10_000)
    const after = rssMb(server.pid)
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0)
    const statuses = /statuses (.*)/.exec(out)?.[1] ?? /Non-2xx or 3xx responses: \d+/.exec(out)?.[0] ?? 'all 2xx/3xx'
    return { idle, peak, after, rps, statuses }
  } finally {
    await server.stop()
  }
}

const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return `${s[0]!.toFixed(0)}/${s[Math.floor(s.length / 2)]!.toFixed(0)}/${s[s.length - 1]!.toFixed(0)}`
}

const variants: [string, string, string][] =
  compare || compareBin
    ? [
        ['A', compare ? resolve(compare) : HERE, compareBin ? resolve(compareBin) : ''],
        ['B', HERE, bin ? resolve(bin) : ''],
      ]
    : [['B', HERE, bin ? resolve(bin) : '']]
const kinds = mode === 'both' ? (['visits', 'attack'] as const) : ([mode] as ('visits' | 'attack')[])
console.log(
  `load ${(await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')}; wrk -t2 -c${connections} -d${seconds}s over HTTPS on loopback; ${rounds} rounds; attack: ${keyBytes} B keys, ${uaBytes} B User-Agents`,
)
for (const v of variants) console.log(`${v[0]}: ${v[2] || `bun ${v[1]}/src/main.ts`}`)
for (const kind of kinds) {
  const runs = new Map<string, Run[]>(variants.map(([name]) => [name, []]))
  for (let r = 0; r < rounds; r++)
    for (const [name, root, binary] of variants) {
      const run = await measure(root, kind, binary)
      runs.get(name)!.push(run)
      console.log(
        `  ${kind} ${name} round ${r + 1}: idle ${run.idle.toFixed(0)} MB, peak ${run.peak.toFixed(0)} MB, 10 s after ${run.after.toFixed(0)} MB, ${run.rps.toFixed(0)} req/s, ${run.statuses}`,
      )
    }
  for (const [name, rs] of runs)
    console.log(
      `${kind} ${name} RSS MB min/median/max: idle ${stat(rs.map((r) => r.idle))}  peak ${stat(rs.map((r) => r.peak))}  10 s after ${stat(rs.map((r) => r.after))}  req/s ${stat(rs.map((r) => r.rps))}`,
    )
}
