/**
 * One server per port. The HTTPS listener sets SO_REUSEPORT so that a certificate swap can
 * bind its next listener before the old one closes (docs/adr/0004), and with it the kernel
 * would let a second process of the same user join the port silently and take half its
 * visitors. So the first bind claims the port: a probe without SO_REUSEPORT must bind
 * (it fails while anyone listens there, a server with SO_REUSEPORT included), then the real
 * listener binds, and the kernel's table of listening sockets (/proc/net/tcp*) must show
 * no socket of another process on that address and port (two servers that passed their
 * probes at the same instant both see the other and both stop). Only this process's own
 * listeners share the port afterwards.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/** A listener could not be opened: which setting, address and port, and why (an errno code). */
export class ListenError extends Error {
  constructor(
    readonly setting: string,
    readonly hostname: string,
    readonly port: number,
    readonly code: string,
    detail?: string,
  ) {
    super(listenMessage(setting, hostname, port, code, detail))
    this.name = 'ListenError'
  }
}

function listenMessage(setting: string, hostname: string, port: number, code: string, detail?: string): string {
  const where = `port ${port} on ${hostname} (${setting})`
  if (code === 'EADDRINUSE') return `${where} is in use by another process${detail ? ` (${detail})` : ''}; stop it or choose another port`
  if (code === 'EACCES' || code === 'EPERM') return `no permission to listen on ${where}: ports below 1024 need root or CAP_NET_BIND_SERVICE`
  if (code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: the address is not on this machine (server.hostname)`
  return `cannot listen on ${where}: ${detail ?? code}`
}

/** `error` of a failed Bun.serve / Bun.listen as a ListenError naming the setting. */
export function asListenError(error: unknown, setting: string, hostname: string, port: number): ListenError {
  if (error instanceof ListenError) return error
  const e = error as { code?: string; message?: string }
  return new ListenError(setting, hostname, port, e?.code || 'EUNKNOWN', e?.code ? undefined : String(e?.message ?? error))
}

/**
 * Binds `bind(port)` (a listener with SO_REUSEPORT) as the only process on `hostname:port`;
 * a ListenError (EADDRINUSE) when another process listens there or joins at the same instant.
 */
export function listenExclusively<S extends { stop(closeActiveConnections?: boolean): unknown; port?: number }>(
  setting: string,
  hostname: string,
  port: number,
  bind: (port: number) => S,
): S {
  if (port !== 0) {
    let probe: { stop(force?: boolean): void }
    try {
      probe = Bun.listen({ hostname, port, socket: { data() {} } })
    } catch (e) {
      throw asListenError(e, setting, hostname, port)
    }
    probe.stop(true)
  }
  let server: S
  try {
    server = bind(port)
  } catch (e) {
    throw asListenError(e, setting, hostname, port)
  }
  const others = foreignListeners(server.port ?? port)
  if (others > 0) {
    void server.stop(true)
    throw new ListenError(setting, hostname, port, 'EADDRINUSE', 'another server started on it at the same moment')
  }
  return server
}

/** IPv4 and IPv6 "any" addresses as /proc/net/tcp* print them. */
const WILDCARDS = new Set(['00000000', '00000000000000000000000000000000'])

interface Listening {
  address: string
  port: number
  inode: string
}

function listeningSockets(): Listening[] {
  const out: Listening[] = []
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(table, 'utf8')
    } catch {
      continue // no /proc (not Linux), or no IPv6
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length < 10 || f[3] !== '0A') continue // 0A: LISTEN
      const [address, port] = f[1]!.split(':')
      out.push({ address: address!, port: Number.parseInt(port!, 16), inode: f[9]! })
    }
  }
  return out
}

function ownSocketInodes(): Set<string> {
  const inodes = new Set<string>()
  let fds: string[]
  try {
    fds = readdirSync('/proc/self/fd')
  } catch {
    return inodes
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))
      if (m) inodes.add(m[1]!)
    } catch {}
  }
  return inodes
}

/**
 * Listening sockets of other processes on `port` whose address overlaps one of ours (the
 * same, or either is a wildcard). 0 where /proc cannot tell (then the probe alone decides).
 */
export function foreignListeners(port: number): number {
  const onPort = listeningSockets().filter((s) => s.port === port)
  const own = ownSocketInodes()
  const ours = onPort.filter((s) => own.has(s.inode))
  const overlaps = (s: Listening) => ours.some((o) => o.address === s.address || WILDCARDS.has(o.address) || WILDCARDS.has(s.address))
  return onPort.filter((s) => !own.has(s.inode) && overlaps(s)).length
}
