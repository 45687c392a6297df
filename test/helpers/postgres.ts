/**
 * A real PostgreSQL for tests: Debian's `postgresql` package, a cluster initdb'd into a
 * temp dir, listening on a free loopback port, fsync off. PostgreSQL refuses to run as
 * root, so as root every command runs as the `postgres` user.
 */
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import { migratePostgres } from '../../src/store'
import { atRunEnd } from './cleanup'
import { freePort } from './server'

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string
  port: number
  dir: string
  start(): Promise<void>
  /** `pg_ctl stop -m fast`: connections are cut, as when a server goes down. */
  stop(): Promise<void>
  /** Stops and removes the cluster. */
  destroy(): Promise<void>
  /** Creates an empty database (under an ICU locale when asked) and answers its URL. */
  createDatabase(name: string, options?: { icuLocale?: string }): Promise<string>
}

export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return null
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin/initdb')))
    .sort((a, b) => Number(b) - Number(a))
  return versions[0] ? join(root, versions[0], 'bin') : null
}

async function run(cmd: string[]): Promise<void> {
  const asPostgres = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...cmd] : cmd
  const p = Bun.spawn(asPostgres, { stdout: 'pipe', stderr: 'pipe' })
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(' ')} failed:\n${out}${err}`)
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir()
  if (!bin) throw new Error('PostgreSQL is not installed (Debian package postgresql; scripts/install-test-tools.sh installs it)')
  // The postgres user must reach the directory: /tmp may be private to root (it is on this machine).
  const dir = mkdtempSync(join(process.getuid?.() === 0 ? '/var/tmp' : tmpdir(), 'shortlink-pg-'))
  chmodSync(dir, 0o700)
  if (process.getuid?.() === 0) {
    const { uid, gid } = await postgresIds()
    chownSync(dir, uid, gid)
  }
  const port = await freePort()
  const data = join(dir, 'data')
  const asPostgres = (cmd: string[]) => (process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...cmd] : cmd)
  // Stopped and removed at the end of the run if the test does not (a failure, a timeout): pg_ctl daemonises it.
  const forget = atRunEnd({
    name: `PostgreSQL cluster in ${dir}`,
    async: () => pg.destroy(),
    sync() {
      if (existsSync(join(data, 'postmaster.pid'))) Bun.spawnSync(asPostgres([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']))
      rmSync(dir, { recursive: true, force: true })
    },
  })
  await run([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'])
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400`
  const pg: TestPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    start: () => run([join(bin, 'pg_ctl'), '-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']),
    stop: () => run([join(bin, 'pg_ctl'), '-D', data, '-m', 'fast', '-w', 'stop']),
    async destroy() {
      forget()
      await pg.stop().catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    },
    async createDatabase(name, { icuLocale } = {}) {
      const admin = new SQL(pg.url)
      await admin.unsafe(`CREATE DATABASE ${name}${icuLocale ? ` LOCALE_PROVIDER icu ICU_LOCALE '${icuLocale}' TEMPLATE template0` : ''}`)
      await admin.close()
      return pg.url.replace(/\/postgres$/, `/${name}`)
    },
  }
  await pg.start()
  return pg
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const text = await Bun.file('/etc/passwd').text()
  const line = text.split('\n').find((l) => l.startsWith('postgres:'))
  if (!line) throw new Error('no postgres user (installed with the postgresql package)')
  const [, , uid, gid] = line.split(':')
  return { uid: Number(uid), gid: Number(gid) }
}

/**
 * A cluster holding one fresh database, migrated, for store adapter tests. Its ICU locale
 * sorts and lower-cases by language, so an adapter that must answer as SQLite does (code-point
 * order, ASCII-only lower-casing) is tested where the two would differ.
 */
export async function startMigratedDatabase(database: string): Promise<{ sql: SQL; url: string; pg: TestPostgres; close(): Promise<void> }> {
  const pg = await startPostgres()
  const url = await pg.createDatabase(database, { icuLocale: 'en' })
  const sql = new SQL(url, { max: 4 })
  await migratePostgres(sql)
  return {
    sql,
    /** The database's URL, for more clients (other nodes). */
    url,
    /** The cluster, to stop and start it (an outage). */
    pg,
    async close() {
      await sql.close()
      await pg.destroy()
    },
  }
}
