/**
 * Starts a real shortlink server for end-to-end tests: the compiled binary when
 * SHORTLINK_BIN is set (CI), else `bun src/main.ts`; random free ports, a temp data
 * dir, real TLS verified against the server's own CA. Logs are printed on failure.
 * With SHORTLINK_TEST_PG_URL (a PostgreSQL cluster's admin URL, set by
 * scripts/with-postgres.ts) each data dir gets a database of its own there and the server
 * serves from it (`[store] url`): the same suite runs against one node on PostgreSQL.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { SQL, type Subprocess } from 'bun'

const ROOT = resolve(import.meta.dir, '../..')

export function shortlinkCommand(): string[] {
  const bin = process.env.SHORTLINK_BIN
  return bin ? [resolve(ROOT, bin)] : ['bun', join(ROOT, 'src/main.ts')]
}

/** A browser's User-Agent: its visits are counted (bots' are not). */
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'

/** Ports handed out by this test process: the kernel may offer a just-closed one again. */
const handedOut = new Set<number>()

export async function freePort(): Promise<number> {
  for (;;) {
    const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
    const port = s.port!
    s.stop(true)
    if (!handedOut.has(port)) {
      handedOut.add(port)
      return port
    }
  }
}

/** A response's status and parsed JSON body, for assertions. */
export const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as any })

/** The server's JSON log lines so far (its output also holds plain lines: the first admin key, stderr). */
export const logLines = (s: Pick<TestServer, 'output'>) =>
  s
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: string; msg: string; [k: string]: unknown })

export interface TestServer {
  dir: string
  /** The server's data dir: `<dir>/data` unless given. */
  dataDir: string
  /** The PostgreSQL database this node serves from, or '' for its SQLite file. */
  storeUrl: string
  httpsPort: number
  httpPort: number
  baseUrl: string
  adminKey: string
  ca: string
  proc: Subprocess
  output(): string
  /** fetch against the API with the admin key (or `key`), TLS verified with the server's CA. */
  api(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<Response>
  fetch(url: string, init?: RequestInit): Promise<Response>
  run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>
  /** A new API key for `user` (added first when new) through the CLI, as an operator makes one. */
  keyFor(user: string, role: 'admin' | 'member' | 'readonly'): Promise<string>
  /**
   * Flush barrier: resolves once every visit made before the call is in the store. It makes a
   * counted visit to a sentinel link (key \`flush-barrier\`) and waits until that visit is
   * stored: the recorder writes visits in the order they came, so every earlier one is too.
   * The sentinel's clicks count in totals over all links: suites that read those use their own waits.
   */
  clicksFlushed(): Promise<void>
  stop(signal?: NodeJS.Signals): Promise<number>
}

export interface StartOptions {
  /** Extra TOML appended after the generated [server] section. */
  toml?: string
  /** The store to serve from: PostgreSQL when the run provides one (SHORTLINK_TEST_PG_URL), else SQLite; or this URL ('': SQLite always). */
  storeUrl?: string
  /** baseUrl in the config (a cluster's load balancer); the TestServer still talks to this node directly. */
  publicBaseUrl?: string
  /** The CA to trust for this node (when its certificate is another node's), instead of its data dir's. */
  ca?: string
  env?: Record<string, string>
  dir?: string
  /** The data dir, when not `<dir>/data` (a small file system a test mounted). */
  dataDir?: string
}

/** True when this run serves the e2e suite from PostgreSQL (scripts/with-postgres.ts). */
export const onPostgres = (): boolean => !!process.env.SHORTLINK_TEST_PG_URL

/** Data dir → its database in the run's PostgreSQL: a restart on the same dir finds its data. */
const databases = new Map<string, string>()
let databaseCount = 0

/** A new empty database in the run's PostgreSQL cluster, answered as its URL. */
export async function createTestDatabase(): Promise<string> {
  const admin = process.env.SHORTLINK_TEST_PG_URL
  if (!admin) throw new Error('no PostgreSQL for this run (SHORTLINK_TEST_PG_URL; scripts/with-postgres.ts sets it)')
  const name = `e2e_${process.pid}_${++databaseCount}`
  const sql = new SQL(admin, { max: 1 })
  try {
    await sql.unsafe(`CREATE DATABASE ${name}`)
  } finally {
    await sql.close()
  }
  return admin.replace(/\/[^/?]*(\?.*)?$/, `/${name}`)
}

export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'shortlink-e2e-'))
  const dataDir = opts.dataDir ?? join(dir, 'data')
  const httpsPort = await freePort()
  const httpPort = await freePort()
  let storeUrl = opts.storeUrl ?? databases.get(dir) ?? ''
  const freshStore = storeUrl === '' ? !existsSync(join(dataDir, 'shortlink.db')) : !databases.has(dir) && opts.storeUrl === undefined
  // An explicit '' keeps the node on its SQLite file in a PostgreSQL run too (tests of the SQLite side).
  if (!storeUrl && onPostgres() && opts.storeUrl !== '') storeUrl = await createTestDatabase()
  if (storeUrl) databases.set(dir, storeUrl)
  // [store] first: opts.toml continues the [server] section.
  const config = `[store]
url = "${storeUrl}"

[server]
baseUrl = "${opts.publicBaseUrl ?? `https://localhost:${httpsPort}/api`}"
httpsPort = ${httpsPort}
httpPort = ${httpPort}
hostname = "127.0.0.1"
dataDir = "${dataDir}"
${opts.toml ?? ''}`
  writeFileSync(join(dir, 'shortlink.toml'), config)
  // A fresh store with no fixed admin key prints a first key (on stdout, apart from the log).
  const expectKey = freshStore && !opts.env?.SHORTLINK_ADMIN_KEY
  let out = ''
  const proc = Bun.spawn([...shortlinkCommand(), 'serve', '--config', join(dir, 'shortlink.toml')], {
    cwd: dir,
    env: { ...process.env, ...opts.env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) out += new TextDecoder().decode(chunk)
  }
  void collect(proc.stdout as ReadableStream<Uint8Array>)
  void collect(proc.stderr as ReadableStream<Uint8Array>)

  // Bounds a failing start only; a loaded machine may take seconds.
  const deadline = Date.now() + 60_000
  while (!/"msg":"started"/.test(out) || (expectKey && !/sk_[A-Za-z0-9_-]+/.test(out))) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start:\n${out}`)
    await Bun.sleep(25)
  }
  const adminKey = /(sk_[A-Za-z0-9_-]+)/.exec(out)?.[1] ?? opts.env?.SHORTLINK_ADMIN_KEY ?? ''
  const caPath = `${dataDir}/tls/ca.pem`
  const ca = opts.ca ?? (existsSync(caPath) ? readFileSync(caPath, 'utf8') : '')
  const baseUrl = `https://localhost:${httpsPort}/api`
  let sentinel: Promise<{ id: string; shortLink: string; visits: number }> | undefined
  const tlsFetch = (url: string, init: RequestInit = {}) => fetch(url, { ...init, tls: { ca }, redirect: 'manual' } as RequestInit)

  const server: TestServer = {
    dir,
    dataDir,
    storeUrl,
    httpsPort,
    httpPort,
    baseUrl,
    adminKey,
    ca,
    proc,
    output: () => out,
    fetch: tlsFetch,
    api(path, init = {}) {
      const { key, json, ...rest } = init
      const headers = new Headers(rest.headers)
      const k = key === undefined ? adminKey : key
      if (k) headers.set('authorization', `Bearer ${k}`)
      if (json !== undefined) headers.set('content-type', 'application/json')
      return tlsFetch(baseUrl + path, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body })
    },
    async run(args) {
      const p = Bun.spawn([...shortlinkCommand(), ...args, '--config', join(dir, 'shortlink.toml')], { cwd: dir, stdout: 'pipe', stderr: 'pipe' })
      const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
      return { code: await p.exited, stdout, stderr }
    },
    async keyFor(user, role) {
      await server.run(['users', 'add', user])
      const made = await server.run(['keys', 'create', '--user', user, '--role', role])
      if (made.code !== 0) throw new Error(`keys create failed: ${made.stderr}`)
      return made.stdout.trim()
    },
    async clicksFlushed() {
      sentinel ??= (async () => {
        const r = await server.api('/links/link', {
          method: 'POST',
          json: { data: { url: 'https://flush-barrier.example/' }, linkOptions: { key: 'flush-barrier' } },
        })
        if (r.status !== 200) throw new Error(`flush barrier link: ${r.status} ${await r.text()}`)
        return { ...((await r.json()) as { id: string; shortLink: string }), visits: 0 }
      })()
      const link = await sentinel
      const visited = await tlsFetch(link.shortLink, { headers: { 'user-agent': BROWSER_UA } })
      if (visited.status !== 302) throw new Error(`flush barrier visit answered ${visited.status}`)
      link.visits++
      const deadline = Date.now() + 60_000
      for (;;) {
        const stored = (await (await server.api(`/links/${link.id}`)).json()) as { clicks: number }
        if (stored.clicks >= link.visits) return
        if (Date.now() > deadline) throw new Error(`visits not stored within 60 s (sentinel has ${stored.clicks} of ${link.visits})`)
        await Bun.sleep(25) // a poll interval, not a wait standing in for the barrier
      }
    },
    async stop(signal = 'SIGTERM') {
      if (proc.exitCode !== null) return proc.exitCode
      proc.kill(signal)
      return await proc.exited
    },
  }
  return server
}

/** Runs the CLI once (no server) in a directory. */
export async function runCli(args: string[], opts: { cwd: string; env?: Record<string, string> }) {
  const p = Bun.spawn([...shortlinkCommand(), ...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  return { code: await p.exited, stdout, stderr }
}

/**
 * Rows of a read-only query against a server's store, whichever it is: its SQLite file or
 * its PostgreSQL database (the same SQL text, so keep it to plain SELECTs).
 */
export async function queryStore<T>(server: Pick<TestServer, 'dataDir' | 'storeUrl'>, text: string): Promise<T[]> {
  if (!server.storeUrl) {
    const { Database } = await import('bun:sqlite')
    const db = new Database(join(server.dataDir, 'shortlink.db'), { readonly: true })
    try {
      return db.query(text).all() as T[]
    } finally {
      db.close()
    }
  }
  const sql = new SQL(server.storeUrl, { max: 1 })
  try {
    return (await sql.unsafe(text)) as T[]
  } finally {
    await sql.close()
  }
}
