/**
 * Short domains: the configured defaults (read-only) and customer domains (admin-managed,
 * shared by all users). Keeps every domain in memory so the redirect path's `lookup` and
 * the link service's `isUsableForLinks` are map reads; every write refreshes the map and
 * tells `onChange` listeners (the certificate manager, the redirect server). CNAME checks
 * and their retries are the state machine of domains.cname-state.ts.
 */
import { domainToASCII } from 'node:url'
import type { Caller } from '../auth'
import type { Settings } from '../config'
import { forbidden, type Logger, normaliseUrl, notFound, pageWindow, parameterError, toIso } from '../shared'
import type { CnameChecker } from './cname'
import { createCnameVerification } from './domains.cname-state'
import { normaliseHost, parseDomainName } from './domains.names'
import type { CnameStatus, SslStatus } from './domains.schema'
import type { DomainSettings, DomainState, DomainStore, SslState } from './domains.store'

/** What the redirect server needs per request. */
export interface DomainLookup
  extends Pick<DomainState, 'slug' | 'destination' | 'notFoundUrl' | 'expiredUrl' | 'assetLinks' | 'appleAppSiteAssociation' | 'archived'> {
  isDefault: boolean
  /** HTTPS answers carry Strict-Transport-Security: a default domain, or a certificate is active. */
  hsts: boolean
}

export interface DomainRecord extends Omit<DomainLookup, 'hsts'> {
  clicks: number
  cnameStatus: CnameStatus
  cnameTarget: string
  cnameDetail: string | null
  sslStatus: SslStatus
  sslError: string | null
  createdAt: string
}

/** `ssl` events come from the certificate manager itself. */
export type DomainEvent = { type: 'created' | 'updated' | 'deleted' | 'cname' | 'ssl'; slug: string }

export interface DomainInput {
  destination?: string | null
  notFoundUrl?: string | null
  expiredUrl?: string | null
  assetLinks?: string | null
  appleAppSiteAssociation?: string | null
}

export interface ListDomainsInput {
  domains?: string[]
  search?: string
  includeArchived?: boolean
  sortBy?: 'created_at' | 'domain'
  sortOrder?: 'asc' | 'desc'
  page?: number
  pageSize?: number
}

function checkJson(value: string, field: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch (e) {
    throw parameterError(`'${field}' must be valid JSON (${(e as Error).message})`)
  }
  if (typeof parsed !== 'object' || parsed === null) throw parameterError(`'${field}' must be a JSON object or array`)
  return value
}

const requireAdmin = (caller: Caller) => {
  if (caller.role !== 'admin') throw forbidden('managing domains needs an admin key; members may list domains and use them for links')
}

/** A lookup's fields that API records show (HSTS is the listener's business). */
function recordPart({ hsts: _, ...shown }: DomainLookup): Omit<DomainLookup, 'hsts'> {
  return shown
}

export function createDomainService(opts: {
  store: DomainStore
  settings: Settings
  cname: CnameChecker
  /** First retry delay for CNAME re-checks (and certificate orders); doubles per attempt. */
  retryMs: number
  log: Logger
  now?: () => number
}) {
  const { store, settings, cname, log } = opts
  const now = opts.now ?? Date.now
  const states = new Map<string, DomainState>()
  const lookups = new Map<string, DomainLookup>()
  const listeners = new Set<(e: DomainEvent) => void>()

  const defaultCreatedAt = toIso(store.storeCreatedAt())!
  /** What the redirect server knows of a default domain: no fallbacks, no deep-link files. */
  const defaultLookup = (slug: string): DomainLookup => ({
    slug,
    destination: null,
    notFoundUrl: null,
    expiredUrl: null,
    assetLinks: null,
    appleAppSiteAssociation: null,
    archived: false,
    isDefault: true,
    hsts: true,
  })
  const defaults = new Map<string, DomainRecord>(
    settings.defaultDomains.map((slug) => [
      slug,
      {
        ...recordPart(defaultLookup(slug)),
        clicks: 0,
        cnameStatus: 'valid',
        cnameTarget: cname.target,
        cnameDetail: null,
        sslStatus: 'active',
        sslError: null,
        createdAt: defaultCreatedAt,
      },
    ]),
  )

  const toLookup = (s: DomainState): DomainLookup => ({
    slug: s.slug,
    destination: s.destination,
    notFoundUrl: s.notFoundUrl,
    expiredUrl: s.expiredUrl,
    assetLinks: s.assetLinks,
    appleAppSiteAssociation: s.appleAppSiteAssociation,
    archived: s.archived,
    isDefault: false,
    hsts: s.sslStatus === 'active',
  })
  const toRecord = (s: DomainState): DomainRecord => ({
    ...recordPart(toLookup(s)),
    clicks: store.clicksOf(s.slug),
    cnameStatus: s.cnameStatus,
    cnameTarget: cname.target,
    cnameDetail: s.cnameDetail,
    sslStatus: s.sslStatus,
    sslError: s.sslError,
    createdAt: toIso(s.createdAt)!,
  })

  const withClicks = (d: DomainRecord): DomainRecord => ({ ...d, clicks: store.clicksOf(d.slug) })

  function refresh(slug: string): DomainState | null {
    const s = store.get(slug)
    if (s) {
      states.set(slug, s)
      lookups.set(slug, toLookup(s))
    } else {
      states.delete(slug)
      lookups.delete(slug)
    }
    return s
  }
  function reloadAll() {
    states.clear()
    lookups.clear()
    for (const slug of defaults.keys()) lookups.set(slug, defaultLookup(slug))
    for (const s of store.all()) {
      states.set(s.slug, s)
      lookups.set(s.slug, toLookup(s))
    }
  }
  reloadAll()

  function emit(e: DomainEvent) {
    for (const fn of listeners) {
      try {
        fn(e)
      } catch (err) {
        log.error('domain listener failed', { event: e.type, slug: e.slug, error: String((err as Error)?.stack ?? err) })
      }
    }
  }

  function customOrThrow(input: string, forWrite: boolean): DomainState {
    const slug = normaliseHost(input)
    if (defaults.has(slug)) {
      if (forWrite)
        throw forbidden(`${slug} is a default short domain from the server configuration ([domains] defaults); it cannot be changed or deleted through the API`)
    }
    const s = states.get(slug)
    if (!s) throw notFound(`domain ${slug}`)
    return s
  }

  function normaliseInput(input: DomainInput): Partial<Omit<DomainSettings, 'archived'>> {
    const out: Partial<Omit<DomainSettings, 'archived'>> = {}
    for (const f of ['destination', 'notFoundUrl', 'expiredUrl'] as const) {
      const v = input[f]
      if (v !== undefined) out[f] = v === null ? null : normaliseUrl(v, f)
    }
    for (const f of ['assetLinks', 'appleAppSiteAssociation'] as const) {
      const v = input[f]
      if (v !== undefined) out[f] = v === null ? null : checkJson(v, f)
    }
    return out
  }

  const cnameState = createCnameVerification({
    store,
    cname,
    retryMs: opts.retryMs,
    log,
    now,
    reload: refresh,
    changed: (slug) => emit({ type: 'cname', slug }),
  })

  return {
    cnameTarget: cname.target,

    /** Hot path: the domain serving `host` (lower-case, no port), or null. */
    lookup(host: string): DomainLookup | null {
      return lookups.get(host) ?? lookups.get(host.toLowerCase().replace(/\.$/, '')) ?? null
    },

    /** New links may use default domains and custom ones that exist, are not archived and have a valid CNAME. */
    isUsableForLinks(slug: string): boolean {
      const s = normaliseHost(slug)
      if (defaults.has(s)) return true
      const d = states.get(s)
      return !!d && !d.archived && d.cnameStatus === 'valid'
    },

    onChange(fn: (e: DomainEvent) => void): () => void {
      listeners.add(fn)
      return () => listeners.delete(fn)
    },

    create(caller: Caller, input: DomainInput & { domain: string }): DomainRecord {
      requireAdmin(caller)
      const slug = parseDomainName(input.domain)
      if (defaults.has(slug)) throw parameterError(`'domain' ${slug} is a default short domain (server configuration); it exists already`)
      if (slug === settings.apiHost) throw parameterError(`'domain' ${slug} is the API host and cannot be a custom short domain`)
      if (states.has(slug) || store.get(slug)) throw parameterError(`'domain' ${slug} is already registered`)
      const v = normaliseInput(input)
      store.insert(
        slug,
        {
          destination: v.destination ?? null,
          notFoundUrl: v.notFoundUrl ?? null,
          expiredUrl: v.expiredUrl ?? null,
          assetLinks: v.assetLinks ?? null,
          appleAppSiteAssociation: v.appleAppSiteAssociation ?? null,
        },
        caller.userId,
        now(),
      )
      const s = refresh(slug)!
      log.info('domain created', { domain: slug, by: caller.userId })
      emit({ type: 'created', slug })
      return toRecord(s)
    },

    get(_caller: Caller, input: string): DomainRecord {
      const slug = normaliseHost(input)
      const d = defaults.get(slug)
      if (d) return withClicks(d)
      return toRecord(customOrThrow(slug, false))
    },

    update(caller: Caller, input: string, body: DomainInput & { archived?: boolean }): DomainRecord {
      requireAdmin(caller)
      const cur = customOrThrow(input, true)
      const v = normaliseInput(body)
      store.updateSettings(cur.slug, { ...cur, ...v, archived: body.archived ?? cur.archived }, now())
      const s = refresh(cur.slug)!
      emit({ type: 'updated', slug: cur.slug })
      return toRecord(s)
    },

    remove(caller: Caller, input: string): { domain: string } {
      requireAdmin(caller)
      const cur = customOrThrow(input, true)
      store.remove(cur.slug)
      refresh(cur.slug)
      log.info('domain deleted', { domain: cur.slug, by: caller.userId })
      emit({ type: 'deleted', slug: cur.slug })
      return { domain: cur.slug }
    },

    /** Checks the CNAME now; when it is valid and no certificate is served, the next order starts at once. */
    async verify(caller: Caller, input: string): Promise<DomainRecord> {
      requireAdmin(caller)
      const slug = normaliseHost(input)
      const d = defaults.get(slug)
      if (d) return withClicks(d)
      customOrThrow(slug, true)
      if (!(await cnameState.verify(slug))) throw notFound(`domain ${slug}`)
      return toRecord(states.get(slug)!)
    },

    list(_caller: Caller, q: ListDomainsInput): { domains: DomainRecord[]; total: number } {
      const { limit, offset } = pageWindow(q.page, q.pageSize)
      let all: DomainRecord[] = [...[...defaults.values()].map(withClicks), ...[...states.values()].map(toRecord)]
      if (!q.includeArchived) all = all.filter((d) => !d.archived)
      if (q.domains?.length) {
        const wanted = new Set(q.domains.map(normaliseHost))
        all = all.filter((d) => wanted.has(d.slug))
      }
      if (q.search) {
        const s = q.search.trim().toLowerCase()
        const ascii = domainToASCII(s)
        all = all.filter((d) => d.slug.includes(s) || (ascii !== '' && d.slug.includes(ascii)))
      }
      const dir = q.sortOrder === 'asc' ? 1 : -1
      const byName = (a: DomainRecord, b: DomainRecord) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0)
      all.sort(q.sortBy === 'domain' ? (a, b) => dir * byName(a, b) : (a, b) => dir * (a.createdAt.localeCompare(b.createdAt) || byName(a, b)))
      return { domains: all.slice(offset, offset + limit), total: all.length }
    },

    /** Counted visits per domain, from each click flush. */
    addClicks(byDomain: Map<string, number>) {
      store.addClicks(byDomain)
    },

    // For the certificate manager.
    customDomains: (): DomainState[] => [...states.values()],
    stateOf: (slug: string): DomainState | null => states.get(slug) ?? null,
    checkCname: (slug: string) => cnameState.check(slug),
    setSsl(slug: string, ssl: SslState) {
      if (!states.has(slug)) return
      store.updateSsl(slug, ssl)
      refresh(slug)
      emit({ type: 'ssl', slug })
    },
    backoffMs: cnameState.backoffMs,
  }
}
export type DomainService = ReturnType<typeof createDomainService>
