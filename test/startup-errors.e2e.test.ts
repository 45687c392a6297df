/**
 * Every way `serve` can fail to start ends in ONE line, `shortlink: …`, naming the cause and
 * the path, port or setting, and a non-zero exit: never a stack trace or a source listing
 * (contract, Operation). One test per cause, against the binary: the data dir (a file, on a
 * read-only file system, another user's, or holding another user's database), the config,
 * ports in use (a second server with another data dir included: it exits and the first keeps
 * every visit), certificate files, an unreachable store, and a data dir another server holds
 * (two servers started together, over the pid file a kill -9 left: exactly one runs).
 * Read-only mounts and another user need root, as this suite has here and in CI.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { removeAtRunEnd } from './helpers/cleanup'
import { mountTmpfs, requireRoot } from './helpers/mounts'
import { freePort, shortlinkCommand, startServer, type TestServer } from './helpers/server'

const root = mkdtempSync(join(tmpdir(), 'shortlink-start-'))
const running: Subprocess[] = []
const servers: TestServer[] = []
afterAll(async () => {
  for (const s of servers) await s.stop()
  for (const p of running) {
    p.kill('SIGKILL')
    await p.exited
  }
  rmSync(root, { recursive: true, force: true })
})

let configs = 0
/** A config file with fresh ports (unless given) and `dataDir`, plus `extra` TOML. */
async function configFile(dataDir: string, extra = '', ports?: { https: number; http: number }, dir = root): Promise<string> {
  const file = join(dir, `config-${++configs}.toml`)
  const https = ports?.https ?? (await freePort())
  const http = ports?.http ?? (await freePort())
  writeFileSync(
    file,
    `${extra.startsWith('[store]') ? `${extra}\n` : ''}[server]\nbaseUrl = "https://localhost:${https}/api"\nhttpsPort = ${https}\nhttpPort = ${http}\nhostname = "127.0.0.1"\ndataDir = "${dataDir}"\n${extra.startsWith('[store]') ? '' : extra}`,
  )
  return file
}

interface Outcome {
  code: number | null
  started: boolean
  stderr: string
  proc: Subprocess
}

/** Runs `serve`; resolves when it exits, or once it says it started (then it keeps running, stopped in afterAll). */
async function serve(config: string, opts: { command?: string[]; env?: Record<string, string> } = {}): Promise<Outcome> {
  const proc = Bun.spawn([...(opts.command ?? shortlinkCommand()), 'serve', '--config', config], {
    cwd: root,
    env: { ...process.env, ...opts.env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  running.push(proc)
  let stderr = ''
  const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader()
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    stderr += new TextDecoder().decode(value)
    if (/"msg":"started"/.test(stderr)) return { code: null, started: true, stderr, proc }
  }
  return { code: await proc.exited, started: false, stderr, proc }
}

/** The one line a failed start printed (log lines in JSON before it are allowed), after checking there is nothing else. */
function theLine(o: Outcome): string {
  expect(o.started).toBe(false)
  expect(o.code).not.toBe(0)
  const lines = o.stderr.split('\n').filter((l) => l.trim() && !l.startsWith('{"time"'))
  expect(o.stderr).not.toMatch(/^\s+at /m) // a stack trace
  expect(o.stderr).not.toMatch(/^\s*\d+ \| /m) // a source listing
  expect(lines).toHaveLength(1)
  return lines[0]!
}

describe('the data dir', () => {
  test('a file where the data dir should be', async () => {
    const file = join(root, 'not-a-dir')
    writeFileSync(file, 'x')
    expect(theLine(await serve(await configFile(file)))).toBe(`shortlink: the data dir ${file} is a file, not a directory (server.dataDir)`)
    const under = join(file, 'data')
    expect(theLine(await serve(await configFile(under)))).toBe(`shortlink: cannot use the data dir ${under}: a part of the path is a file, not a directory`)
  })

  test('a data dir on a read-only file system, existing or still to be made', async () => {
    const volume = mountTmpfs(join(root, 'ro'), { sizeKb: 1024, readOnly: true })
    try {
      expect(theLine(await serve(await configFile(volume.path)))).toBe(
        `shortlink: cannot use the data dir ${volume.path}: the file system is read-only (${volume.path}/shortlink.pid)`,
      )
      const inside = join(volume.path, 'data')
      expect(theLine(await serve(await configFile(inside)))).toBe(`shortlink: cannot create the data dir ${inside}: the file system is read-only`)
    } finally {
      await volume.unmount()
    }
  })

  describe('as another user (nobody)', () => {
    requireRoot('running the binary as nobody')
    // Outside the run's folder (private to root): nobody must reach the config and the binary.
    const shared = mkdtempSync('/var/tmp/shortlink-nobody-')
    const forget = removeAtRunEnd(shared)
    chmodSync(shared, 0o755)
    afterAll(() => {
      rmSync(shared, { recursive: true, force: true })
      forget()
    })
    const nobodyTmp = join(shared, 'tmp')
    mkdirSync(nobodyTmp, { mode: 0o1777 })
    chmodSync(nobodyTmp, 0o1777)
    const asNobody = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups']
    /** The binary as nobody runs it: where it is, or a copy where nobody can reach it. */
    const command = () => {
      const cmd = shortlinkCommand()
      if (cmd[0] === 'bun' || Bun.spawnSync([...asNobody, 'test', '-x', cmd[0]!]).exitCode === 0) return [...asNobody, ...cmd]
      const copy = join(shared, 'shortlink')
      if (!existsSync(copy)) {
        copyFileSync(cmd[0]!, copy)
        chmodSync(copy, 0o755)
      }
      return [...asNobody, copy]
    }
    const nobody = async (config: string) => {
      chmodSync(config, 0o644)
      return serve(config, { command: command(), env: { TMPDIR: nobodyTmp, HOME: nobodyTmp } })
    }

    test("a data dir that belongs to another user (root's, mode 0700)", async () => {
      const dataDir = join(shared, 'roots')
      mkdirSync(dataDir, { mode: 0o700 })
      expect(theLine(await nobody(await configFile(dataDir, '', undefined, shared)))).toBe(
        `shortlink: the data dir ${dataDir} belongs to uid 0, not to this user (uid 65534): chown it, or run shortlink as its owner`,
      )
    })

    test('a data dir of its own holding a database another user made (a command run with sudo)', async () => {
      const dataDir = join(shared, 'mine')
      mkdirSync(dataDir, { mode: 0o700 })
      chownSync(dataDir, 65534, 65534)
      writeFileSync(join(dataDir, 'shortlink.db'), '', { mode: 0o600 }) // root's
      expect(theLine(await nobody(await configFile(dataDir, '', undefined, shared)))).toBe(
        `shortlink: cannot use the data dir ${dataDir}: permission denied (${dataDir}/shortlink.db)`,
      )
    })
  })

  test('a data dir another server is using; of two servers started together, over the pid file a kill -9 left, exactly one runs', async () => {
    const dataDir = join(root, 'shared-data')
    for (let round = 0; round < 6; round++) {
      const [a, b] = await Promise.all([configFile(dataDir), configFile(dataDir)])
      const outcomes = await Promise.all([serve(a!), serve(b!)])
      const winners = outcomes.filter((o) => o.started)
      expect(winners).toHaveLength(1)
      const loser = outcomes.find((o) => !o.started)!
      // The pid, when the winner has written it by then.
      expect(theLine(loser)).toMatch(
        new RegExp(`^shortlink: another shortlink server (\\(pid ${winners[0]!.proc.pid}\\) )?is using ${dataDir}; stop it first$`),
      )
      winners[0]!.proc.kill('SIGKILL')
      await winners[0]!.proc.exited
      expect(existsSync(join(dataDir, 'shortlink.pid'))).toBe(true) // what a kill -9 leaves
    }
  })
})

describe('the config', () => {
  test('a file that is not TOML, and values that break their rules', async () => {
    const notToml = join(root, 'broken.toml')
    writeFileSync(notToml, '[server\nhttpsPort = ')
    const broken = await serve(notToml)
    expect(theLine(broken)).toStartWith(`shortlink: invalid configuration: ${notToml}: not valid TOML`)
    expect(broken.code).toBe(2)
    const bad = join(root, 'bad-values.toml')
    writeFileSync(bad, '[server]\nhttpsPort = "lots"\n[limits]\napiPerMinute = -5\n')
    const line = theLine(await serve(bad))
    expect(line).toStartWith('shortlink: invalid configuration: server.httpsPort')
    expect(line).toContain('; limits.apiPerMinute')
  })
})

describe('ports', () => {
  test('an HTTPS or HTTP port another program listens on', async () => {
    const other = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('another program') })
    try {
      const busy = other.port!
      const free = await freePort()
      const https = theLine(await serve(await configFile(join(root, 'p1'), '', { https: busy, http: free })))
      expect(https).toBe(`shortlink: port ${busy} on 127.0.0.1 (server.httpsPort) is in use by another process; stop it or choose another port`)
      const http = theLine(await serve(await configFile(join(root, 'p2'), '', { https: free, http: busy })))
      expect(http).toBe(`shortlink: port ${busy} on 127.0.0.1 (server.httpPort) is in use by another process; stop it or choose another port`)
    } finally {
      other.stop(true)
    }
  })

  test('a second server with another data dir on the ports of a running one exits naming the port; the first keeps every visit', async () => {
    const first = await startServer()
    servers.push(first)
    const made = await first.api('/links/link', { method: 'POST', json: { data: { url: 'https://kept.example/' }, linkOptions: { key: 'printed' } } })
    expect(made.status).toBe(200)
    const second = await serve(await configFile(join(root, 'second'), '', { https: first.httpsPort, http: first.httpPort }))
    expect(theLine(second)).toBe(
      `shortlink: port ${first.httpsPort} on 127.0.0.1 (server.httpsPort) is in use by another process; stop it or choose another port`,
    )
    const statuses = new Set<number>()
    for (let i = 0; i < 40; i++) statuses.add((await first.fetch(`https://localhost:${first.httpsPort}/printed`)).status)
    expect([...statuses]).toEqual([302])
  })
})

describe('certificates (tls.mode = "files")', () => {
  const files = (cert: string, key: string) => `[tls]\nmode = "files"\ncertFile = "${cert}"\nkeyFile = "${key}"\n`
  const pair = (name: string) => {
    const dir = join(root, `cert-${name}`)
    mkdirSync(dir)
    const r = Bun.spawnSync(
      ['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=localhost'].concat([
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ]),
      { stderr: 'pipe' },
    )
    expect(r.exitCode).toBe(0)
    return { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') }
  }

  test('a missing certificate file', async () => {
    const { key } = pair('missing')
    const gone = join(root, 'nowhere.pem')
    expect(theLine(await serve(await configFile(join(root, 'c1'), files(gone, key))))).toBe(
      `shortlink: invalid configuration: tls.certFile: no such file ${gone}`,
    )
  })

  test('a certificate file that holds no certificate, a key file that holds no key, and a key of another certificate', async () => {
    const a = pair('a')
    const b = pair('b')
    expect(theLine(await serve(await configFile(join(root, 'c2'), files(a.key, a.key))))).toBe(`shortlink: tls.certFile ${a.key}: not a PEM certificate`)
    expect(theLine(await serve(await configFile(join(root, 'c3'), files(a.cert, a.cert))))).toBe(
      `shortlink: tls.keyFile ${a.cert}: not a PEM private key (or one with a passphrase)`,
    )
    expect(theLine(await serve(await configFile(join(root, 'c4'), files(a.cert, b.key))))).toBe(
      `shortlink: tls.keyFile ${b.key} is not the key of the certificate in tls.certFile ${a.cert}`,
    )
    // Nothing was written for them: the check comes before the store.
    expect(existsSync(join(root, 'c4/shortlink.db'))).toBe(false)
  })
})

describe('the store', () => {
  test('a PostgreSQL store that cannot be reached: named, its password masked', async () => {
    const closed = await freePort() // nothing listens there
    const line = theLine(await serve(await configFile(join(root, 'pg'), `[store]\nurl = "postgres://shortlink:s3cret@127.0.0.1:${closed}/links"`)))
    expect(line).toBe(
      `shortlink: cannot use the PostgreSQL store postgres://shortlink:***@127.0.0.1:${closed}/links (store.url): cannot connect (refused, or no such host)`,
    )
  })
})
