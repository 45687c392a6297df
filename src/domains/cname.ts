/**
 * Does a customer's domain point at us? Follows the CNAME chain (up to 5 hops) to the
 * configured target; a name without a CNAME (an apex domain) passes when all of its
 * A/AAAA addresses are the target's. Temporary DNS failures (SERVFAIL, timeout,
 * refused) never decide: the outcome is `pending` and the caller retries later.
 */
import { Resolver } from 'node:dns/promises'

export type CnameOutcome = { status: 'valid' | 'invalid' | 'pending'; detail: string }

export interface CnameChecker {
  readonly target: string
  check(domain: string): Promise<CnameOutcome>
}

const MAX_HOPS = 5
// "This name has no such record" answers; everything else is a failure to get an answer.
const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND', 'ENONAME'])

type Answer = { ok: true; values: string[] } | { ok: false; code: string }

const norm = (name: string) => name.trim().toLowerCase().replace(/\.$/, '')

export function createCnameChecker(opts: { target: string; dnsServers: string[]; timeoutMs?: number }): CnameChecker {
  const target = norm(opts.target)
  const resolver = new Resolver({ timeout: opts.timeoutMs ?? 2000, tries: 1 })
  if (opts.dnsServers.length) {
    try {
      resolver.setServers(opts.dnsServers)
    } catch (e) {
      throw new Error(`domains.dnsServers: ${(e as Error).message} (expected addresses such as 192.0.2.53, 192.0.2.53:5353 or [2001:db8::53]:53)`)
    }
  }

  async function ask(fn: () => Promise<string[]>): Promise<Answer> {
    try {
      return { ok: true, values: await fn() }
    } catch (e) {
      const code = String((e as { code?: string }).code ?? 'EUNKNOWN')
      return NO_RECORDS.has(code) ? { ok: true, values: [] } : { ok: false, code }
    }
  }

  async function addresses(name: string): Promise<Answer> {
    const [a, aaaa] = await Promise.all([ask(() => resolver.resolve4(name)), ask(() => resolver.resolve6(name))])
    if (!a.ok) return a
    if (!aaaa.ok) return aaaa
    return { ok: true, values: [...a.values, ...aaaa.values] }
  }

  const temporary = (what: string, code: string): CnameOutcome => ({
    status: 'pending',
    detail: `DNS lookup of ${what} failed temporarily (${code}); will retry`,
  })

  return {
    target,
    async check(domain) {
      const chain: string[] = []
      let name = norm(domain)
      for (let hop = 0; hop < MAX_HOPS; hop++) {
        const r = await ask(() => resolver.resolveCname(name))
        if (!r.ok) return temporary(`CNAME of ${name}`, r.code)
        if (r.values.length === 0) break
        name = norm(r.values[0]!)
        chain.push(name)
        if (name === target) return { status: 'valid', detail: `CNAME ${[norm(domain), ...chain].join(' → ')}` }
      }
      if (chain.length > 0) {
        const hops = chain.length >= MAX_HOPS ? ` (gave up after ${MAX_HOPS} hops)` : ''
        return { status: 'invalid', detail: `${norm(domain)} is a CNAME to ${chain.join(' → ')}${hops}, not to ${target}` }
      }
      const [mine, theirs] = await Promise.all([addresses(norm(domain)), addresses(target)])
      if (!mine.ok) return temporary(`A/AAAA of ${norm(domain)}`, mine.code)
      if (!theirs.ok) return temporary(`A/AAAA of ${target}`, theirs.code)
      if (mine.values.length === 0)
        return { status: 'invalid', detail: `${norm(domain)} has no CNAME, A or AAAA records; add a CNAME record pointing to ${target}` }
      const ours = new Set(theirs.values)
      const foreign = mine.values.filter((a) => !ours.has(a))
      if (ours.size > 0 && foreign.length === 0) return { status: 'valid', detail: `A/AAAA records ${mine.values.join(', ')} are ${target}'s` }
      return {
        status: 'invalid',
        detail: `${norm(domain)} has no CNAME and its addresses ${foreign.join(', ')} are not ${target}'s (${theirs.values.join(', ') || 'none'}); add a CNAME record pointing to ${target}`,
      }
    },
  }
}
