/**
 * Which addresses the server must not reach for a user (POST /qr/scan, logos and frames,
 * webhook deliveries): private, loopback, link-local, reserved and multicast ones, including
 * every IPv6 form that carries an IPv4 address inside it (mapped, compatible, SIIT-translated,
 * NAT64, 6to4, Teredo), each judged by the address it carries, in dotted or hex notation
 * alike. `checkedAddress` resolves a URL's host and refuses such an answer; `pinnedRequest`
 * then sends the request to the address that was checked, so a second DNS answer cannot
 * point it elsewhere (DNS rebinding).
 */
import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import { AppError, parameterError } from './errors'

const v4Blocked = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  v4Blocked.addSubnet(net, bits, 'ipv4')

const v6Blocked = new BlockList()
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): the IPv4 inside may sit anywhere
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some stacks)
  ['ff00::', 8], // multicast
] as const)
  v6Blocked.addSubnet(net, bits, 'ipv6')

/** The eight 16-bit words of an IPv6 address (a trailing dotted quad included), or null. */
function ipv6Words(ip: string): number[] | null {
  let text = ip.toLowerCase().replace(/%.*$/, '')
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (quad) {
    const b = quad.slice(1).map(Number)
    text = `${text.slice(0, quad.index)}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`
  }
  const [head, tail, ...rest] = text.split('::')
  if (rest.length) return null
  const parse = (s: string | undefined) => (s ? s.split(':').map((w) => parseInt(w, 16)) : [])
  const h = parse(head)
  const t = parse(tail)
  const words = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t]
  return words.length === 8 && words.every((w) => w >= 0 && w <= 0xffff) ? words : null
}

const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`

/** The IPv4 address an IPv6 address carries by a standard translation or tunnel, or null. */
function embeddedIpv4(w: number[]): string | null {
  const zero = (from: number, to: number) => w.slice(from, to).every((x) => x === 0)
  if (zero(0, 5) && (w[5] === 0xffff || w[5] === 0)) return dotted(w[6]!, w[7]!) // ::ffff:a.b.c.d mapped, ::a.b.c.d compatible
  if (zero(0, 4) && w[4] === 0xffff && w[5] === 0) return dotted(w[6]!, w[7]!) // ::ffff:0:a.b.c.d SIIT
  if (w[0] === 0x64 && w[1] === 0xff9b && zero(2, 6)) return dotted(w[6]!, w[7]!) // 64:ff9b::/96 NAT64
  if (w[0] === 0x2002) return dotted(w[1]!, w[2]!) // 2002::/16 6to4
  if (w[0] === 0x2001 && w[1] === 0) return dotted(w[6]! ^ 0xffff, w[7]! ^ 0xffff) // 2001::/32 Teredo client
  return null
}

/** Private, loopback, link-local, reserved or multicast, in any notation; anything unparsable counts as refused. */
export function isPrivateAddress(ip: string): boolean {
  const v = isIP(ip)
  if (v === 4) return v4Blocked.check(ip, 'ipv4')
  if (v !== 6) return true
  const words = ipv6Words(ip)
  if (!words) return true
  const v4 = embeddedIpv4(words)
  // :: and ::1 read as the compatible forms of 0.0.0.0 and 0.0.0.1, both in 0.0.0.0/8.
  if (v4 !== null) return v4Blocked.check(v4, 'ipv4')
  return v6Blocked.check(words.map((x) => x.toString(16)).join(':'), 'ipv6')
}

const systemLookup = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((x) => x.address)

const gateway = (message: string) => new AppError('bad_gateway', message)

/** What a check of a URL's host needs (webhook deliveries use it too). */
export interface AddressRules {
  allowPrivateNetworks: boolean
  /** Field named in error messages. */
  field: string
  /** Which resolved addresses are refused; default: private, loopback, link-local and reserved ones. */
  isRefusedAddress?: (ip: string) => boolean
  /** The DNS lookup (all addresses of a host); tests substitute their own. */
  resolveHost?: (host: string) => Promise<string[]>
}

/**
 * Checks the URL's host and returns the address to connect to: null when no pinning is
 * needed (an IP literal, or private networks allowed). A refused address is parameter_error,
 * a name that does not resolve bad_gateway.
 */
export async function checkedAddress(url: URL, limits: AddressRules): Promise<string | null> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw parameterError(`'${limits.field}' must be an http(s) URL`)
  if (url.username || url.password) throw parameterError(`'${limits.field}' must not carry credentials`)
  if (limits.allowPrivateNetworks) return null
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  if (isIP(host)) addresses = [host]
  else {
    try {
      addresses = await (limits.resolveHost ?? systemLookup)(host)
    } catch {
      throw gateway(`could not resolve ${host}`)
    }
  }
  if (addresses.length === 0) throw gateway(`could not resolve ${host}`)
  const bad = addresses.find(limits.isRefusedAddress ?? isPrivateAddress)
  // The address itself is not named: answers must not map the server's own network.
  if (bad) throw parameterError(`'${limits.field}' ${host} resolves to a private, loopback or link-local address; such addresses are not fetched`)
  return isIP(host) ? null : addresses[0]!
}

/** The request for `url` sent to `address`: same path, Host header and TLS server name as the URL. */
export function pinnedRequest(url: URL, address: string | null): { href: string; headers: Record<string, string>; tls?: { serverName: string } } {
  if (!address) return { href: url.href, headers: {} }
  const target = new URL(url.href)
  target.hostname = isIP(address) === 6 ? `[${address}]` : address
  return { href: target.href, headers: { host: url.host }, ...(url.protocol === 'https:' ? { tls: { serverName: url.hostname } } : {}) }
}
