/**
 * A real ACME CA for tests: Debian's `pebble` with `pebble-challtestsrv` as its DNS
 * (and ours), both on loopback with random ports. Pebble validates HTTP-01 by fetching
 * `http://<domain>:<httpPort>/.well-known/acme-challenge/<token>` where <domain> is
 * resolved through challtestsrv, so tests point domains at 127.0.0.1 there.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import tls from 'node:tls'
import type { Subprocess } from 'bun'
import { ensureSelfSigned } from '../../src/tls/self-signed'
import { freePort } from './server'

export interface Pebble {
  dir: string
  /** ACME directory URL. */
  directory: string
  /** File holding the CA that signed pebble's own API certificate (for tls.acmeCaFile). */
  apiCaFile: string
  /** `host:port` of challtestsrv's DNS server. */
  dns: string
  /** Pebble's current issuing root (changes on every start). */
  root(): Promise<string>
  /** Mock DNS: point `host` at addresses (A records). */
  addA(host: string, addresses: string[]): Promise<void>
  clearA(host: string): Promise<void>
  setCname(host: string, target: string): Promise<void>
  clearCname(host: string): Promise<void>
  setServfail(host: string): Promise<void>
  clearServfail(host: string): Promise<void>
  output(): string
  stop(): Promise<void>
}

export function pebbleInstalled(): boolean {
  return Bun.which('pebble') !== null && Bun.which('pebble-challtestsrv') !== null
}

const fqdn = (h: string) => (h.endsWith('.') ? h : `${h}.`)

export async function startPebble(opts: { httpPort: number; certValiditySeconds?: number }): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'pebble-'))
  const apiCert = await ensureSelfSigned(dir, ['localhost', '127.0.0.1'])
  writeFileSync(join(dir, 'cert.pem'), apiCert.cert)
  writeFileSync(join(dir, 'key.pem'), apiCert.key)
  const [acmePort, mgmtPort, dnsPort, challMgmtPort, tlsPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()])
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${mgmtPort}`,
      certificate: join(dir, 'cert.pem'),
      privateKey: join(dir, 'key.pem'),
      httpPort: opts.httpPort,
      tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
      ...(opts.certValiditySeconds ? { certificateValidityPeriod: opts.certValiditySeconds } : {}),
    },
  }
  writeFileSync(join(dir, 'pebble-config.json'), JSON.stringify(config))

  let out = ''
  const collect = async (name: string, stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) out += `[${name}] ${new TextDecoder().decode(chunk)}`
  }
  const chall = Bun.spawn(
    [
      'pebble-challtestsrv',
      '-defaultIPv4',
      '',
      '-defaultIPv6',
      '',
      '-http01',
      '',
      '-https01',
      '',
      '-tlsalpn01',
      '',
      '-dns01',
      `127.0.0.1:${dnsPort}`,
      '-management',
      `127.0.0.1:${challMgmtPort}`,
    ],
    { stdout: 'pipe', stderr: 'pipe' },
  )
  void collect('challtestsrv', chall.stdout as ReadableStream<Uint8Array>)
  void collect('challtestsrv', chall.stderr as ReadableStream<Uint8Array>)
  const pebble = Bun.spawn(['pebble', '-config', join(dir, 'pebble-config.json'), '-dnsserver', `127.0.0.1:${dnsPort}`], {
    cwd: dir,
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  void collect('pebble', pebble.stdout as ReadableStream<Uint8Array>)
  void collect('pebble', pebble.stderr as ReadableStream<Uint8Array>)
  const procs: Subprocess[] = [chall, pebble]

  const tls = { ca: apiCert.caCert }
  const directory = `https://127.0.0.1:${acmePort}/dir`
  const manage = async (path: string, body: unknown) => {
    const r = await fetch(`http://127.0.0.1:${challMgmtPort}${path}`, { method: 'POST', body: JSON.stringify(body) })
    if (!r.ok) throw new Error(`challtestsrv ${path}: ${r.status} ${await r.text()}`)
  }

  const deadline = Date.now() + 15_000
  for (;;) {
    const ready = await Promise.all([
      fetch(directory, { tls } as RequestInit).then(
        (r) => r.ok,
        () => false,
      ),
      fetch(`http://127.0.0.1:${challMgmtPort}/`, { method: 'POST' }).then(
        () => true,
        () => false,
      ),
    ])
    if (ready.every(Boolean)) break
    if (Date.now() > deadline || procs.some((p) => p.exitCode !== null)) {
      for (const p of procs) p.kill()
      throw new Error(`pebble did not start:\n${out}`)
    }
    await Bun.sleep(50)
  }

  return {
    dir,
    directory,
    apiCaFile: apiCert.caFile,
    dns: `127.0.0.1:${dnsPort}`,
    async root() {
      const r = await fetch(`https://127.0.0.1:${mgmtPort}/roots/0`, { tls } as RequestInit)
      if (!r.ok) throw new Error(`pebble root: ${r.status}`)
      return r.text()
    },
    addA: (host, addresses) => manage('/add-a', { host: fqdn(host), addresses }),
    clearA: (host) => manage('/clear-a', { host: fqdn(host) }),
    setCname: (host, target) => manage('/set-cname', { host: fqdn(host), target: fqdn(target) }),
    clearCname: (host) => manage('/clear-cname', { host: fqdn(host) }),
    setServfail: (host) => manage('/set-servfail', { host: fqdn(host) }),
    clearServfail: (host) => manage('/clear-servfail', { host: fqdn(host) }),
    output: () => out,
    async stop() {
      for (const p of procs) p.kill()
      await Promise.all(procs.map((p) => p.exited))
    },
  }
}

/** The serial of the certificate served for SNI `name` on a loopback port, verified against `ca` with `name` as its subject; null otherwise. */
export function servedSerial(port: number, name: string, ca: string): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: name, ca, rejectUnauthorized: true }, () => {
      const c = socket.getPeerCertificate()
      resolve(c.subject?.CN === name ? c.serialNumber : null)
      socket.end()
    })
    socket.on('error', () => resolve(null))
    socket.setTimeout(5000, () => {
      resolve(null)
      socket.destroy()
    })
  })
}
