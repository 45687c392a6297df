/**
 * The server the redirect benchmarks measure: `bun src/main.ts serve` (or a built binary)
 * from a temp dir on the embedded defaults plus random ports, with one short link
 * `/bench` created through the API. `root` picks the source tree (to compare commits).
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

export async function freePort() {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const p = s.port!
  s.stop(true)
  return p
}

export interface BenchServer {
  pid: number
  httpsPort: number
  dir: string
  ca: string
  apiKey: string
  /** The id of the `/bench` link. */
  linkId: string
  stop(): Promise<void>
}

/**
 * `cpus`: pin the server to these CPUs (taskset), so it does not share a core with wrk; `toml`: more config sections;
 * `serverToml`: more lines of the [server] section (e.g. `trustProxy = ["127.0.0.1"]`); `env`: more environment
 * variables (e.g. BUN_OPTIONS=--cpu-prof, which a compiled binary reads too); `onLog`: the server's log lines.
 */
export async function startBenchServer(opts: {
  root: string
  bin?: string
  cpus?: string
  toml?: string
  onLog?: (line: string) => void
  serverToml?: string
  env?: Record<string, string>
}): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'shortlink-bench-'))
  const httpsPort = await freePort()
  writeFileSync(
    join(dir, 'shortlink.toml'),
    `[server]\nbaseUrl = "https://localhost:${httpsPort}/api"\nhttpsPort = ${httpsPort}\nhttpPort = ${await freePort()}\nhostname = "127.0.0.1"\ndataDir = "${dir}/data"\n${opts.serverToml ?? ''}\n[limits]\napiPerMinute = 100000\n${opts.toml ?? ''}`,
  )
  const cmd = opts.bin ? [resolve(opts.root, opts.bin)] : ['bun', join(opts.root, 'src/main.ts')]
  const pin = opts.cpus ? ['taskset', '-c', opts.cpus] : []
  const proc = Bun.spawn([...pin, ...cmd, 'serve', '--config', join(dir, 'shortlink.toml')], {
    cwd: dir,
    stdout: 'pipe',
    stderr: opts.onLog ? 'pipe' : 'ignore',
    env: { ...process.env, ...opts.env },
  })
  let out = ''
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
  while (!/sk_[A-Za-z0-9_-]+/.test(out)) {
    const chunk = await reader.read()
    if (chunk.done) throw new Error(`server exited before printing a key: ${out}`)
    out += new TextDecoder().decode(chunk.value)
  }
  reader.releaseLock()
  void proc.stdout.pipeTo(new WritableStream()) // keep draining, so the server never blocks on a full pipe
  // The log (stderr), line by line, to onLog.
  let rest = ''
  if (opts.onLog)
    void (proc.stderr as ReadableStream<Uint8Array>).pipeTo(
      new WritableStream({
        write(chunk) {
          const lines = (rest + new TextDecoder().decode(chunk)).split('\n')
          rest = lines.pop()!
          for (const line of lines) opts.onLog!(line)
        },
      }),
    )
  const apiKey = /(sk_[A-Za-z0-9_-]+)/.exec(out)![1]!
  const ca = readFileSync(`${dir}/data/tls/ca.pem`, 'utf8')
  const created = await fetch(`https://localhost:${httpsPort}/api/links/link`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ data: { url: 'https://example.com/landing?from=bench' }, linkOptions: { key: 'bench', utm: { source: 'qr' } } }),
    tls: { ca },
  } as RequestInit)
  if (created.status !== 200) throw new Error(`create: ${created.status} ${await created.text()}`)
  const { id: linkId } = (await created.json()) as { id: string }
  return {
    pid: proc.pid,
    linkId,
    httpsPort,
    dir,
    ca,
    apiKey,
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
    },
  }
}

/**
 * A bare `Bun.serve` baseline in a process of its own, pinned like ours, over our server's certificate
 * (`server.dir`): `fetchSource` defines `fetch` (it may import from the source tree by absolute path).
 */
export async function startBareServer(server: { dir: string }, name: string, fetchSource: string, cpus: string) {
  const port = await freePort()
  const script = join(server.dir, `${name}.ts`)
  const tls = `tls: { cert: Bun.file(${JSON.stringify(`${server.dir}/data/tls/cert.pem`)}), key: Bun.file(${JSON.stringify(`${server.dir}/data/tls/key.pem`)}) }`
  writeFileSync(script, `${fetchSource}\nBun.serve({ port: ${port}, hostname: '127.0.0.1', ${tls}, fetch })\nconsole.log('ready')\n`)
  const proc = Bun.spawn(['taskset', '-c', cpus, process.execPath, script], { stdout: 'pipe', stderr: 'inherit' })
  for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) if (new TextDecoder().decode(chunk).includes('ready')) break
  return { proc, origin: `https://127.0.0.1:${port}` }
}

/** Resident set size of a process in MB, and its anonymous (heaps) and file-backed (code, mapped files) parts (Linux /proc). */
export function rssPartsMb(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') }
}

/** Resident set size of a process in MB (Linux /proc). */
export function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN)
  return kb / 1024
}

/**
 * A /proc/.../stat file: the command name (between the first '(' and the last ')': it may hold either)
 * and the fields after it, numbered from 0 there (11 utime, 12 stime, in clock ticks of 1/100 s).
 * Null when the process or thread has ended.
 */
export function procStat(path: string): { name: string; fields: number[] } | null {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return null
  }
  return {
    name: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')),
    fields: text
      .slice(text.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number),
  }
}

/** User + system CPU seconds of a stat's fields (procStat). */
const cpuOf = (fields: number[]) => (fields[11]! + fields[12]!) / 100

/**
 * CPU seconds a process's threads have used so far, by kind (Linux /proc/PID/task): `main` (the
 * event loop: requests), `Worker` (JavaScript workers: the click writer), `Bun Pool` (Bun's thread
 * pool, where DuckDB's queries run, and the threads DuckDB starts from it), `other` (JIT, GC, allocator).
 * A thread gone since the last call drops out of its kind's sum; the writer's threads live as long as the server.
 */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const out: Record<string, number> = { main: 0, Worker: 0, 'Bun Pool': 0, other: 0 }
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = procStat(`/proc/${pid}/task/${tid}/stat`)
    if (!stat) continue // ended between the listing and the read
    const { name } = stat
    const kind = tid === String(pid) ? 'main' : name === 'Worker' || name.startsWith('Bun Pool') ? name.replace(/ \d+$/, '') : 'other'
    out[kind]! += cpuOf(stat.fields)
  }
  return out
}

/** CPU time (user + system, all threads) a process has used so far, in seconds (Linux /proc). */
export function cpuSeconds(pid: number): number {
  const stat = procStat(`/proc/${pid}/stat`)
  if (!stat) throw new Error(`process ${pid} has ended`)
  return cpuOf(stat.fields)
}
