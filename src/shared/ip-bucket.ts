import { isIP } from 'node:net'

/** The address a limit counts by: an IPv4 address, or the /64 of an IPv6 one. */
export function ipBucket(ip: string): string {
  if (isIP(ip) !== 6) return ip
  const [head = '', tail] = ip.split('::')
  const groups = head ? head.split(':') : []
  if (tail !== undefined && groups.length < 4) {
    const rest = tail ? tail.split(':') : []
    // Zeros stand for '::' between the head and the tail groups.
    while (groups.length < 8 - rest.length && groups.length < 4) groups.push('0')
    groups.push(...rest)
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}
