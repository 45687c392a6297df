/**
 * Short domains: the configured defaults (read-only) and customer domains (admin-managed,
 * shared by all users). Keeps every domain in memory so the redirect path's `lookup` and
 * the link service's `isUsableForLinks` are map reads; every write refreshes the map and
 * tells `onChange` listeners (the certificate manager, the redirect server). CNAME checks
 * and their retries are the state machine of domains.cname-state.ts.
 *
 * The store is a port (docs/adr/0010): SQLite answers at once, PostgreSQL with promises.
 * `lookup`, `isUsableForLinks`, `customDomains` and `stateOf` read memory only; every method
 * that reads or writes the store answers at once on a synchronous store (then-or-now), so the
 * routes, the certificate manager and the click flush run as before on SQLite, and with a
 * promise on PostgreSQL. Over PostgreSQL the memory is filled when `ready` settles.
 */
import { domainToASCII } from 'node:url'
import type { Caller } from '../auth'
import type { Settings } from '../config'
import { forbidden, type Logger, normaliseUrl, notFound, pageWindow, parameterError, toIso } from '../shared'
import type { CnameChecker } from './cname'
import { createCnameVerification } from './domains.cname-state'
import { normaliseHost, parseDomainName } from './domains.names'
import type { CnameStatus, SslStatus } from './domains.schema'
import type { DomainEventOf, DomainSettings, DomainState, DomainStore, DomainStorePort, SslState } from './domains.store'

/** A result that is synchronous when the store `S` is (the SQLite one), else maybe a promise. */
export type StoreResult<S, T> = S extends DomainStore ? T : T | Promise<T>

/** `f(value)`, at once when `value` is not a promise: keeps a synchronous store's path free of promises. */
function then<T, R>(value: T | Promise<T>, f: (v: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(f) : f(value)
}

/** The values, at once when none is a promise. */
function allOf<T>(values: (T | Promise<T>)[]): T[] | Promise<T[]> {
  return values.some((v) => v instanceof Promise) ? Promise.all(values) : (values as T[])
}

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

export function createDomainService<S extends DomainStorePort = DomainStore>(opts: {
  store: S
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
  /** Default domains' records; createdAt (the store's creation) is filled when the store answers. */
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
        createdAt: '',
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
  const recordOf = (s: DomainState, clicks: number): DomainRecord => ({
    ...recordPart(toLookup(s)),
    clicks,
    cnameStatus: s.cnameStatus,
    cnameTarget: cname.target,
    cnameDetail: s.cnameDetail,
    sslStatus: s.sslStatus,
    sslError: s.sslError,
    createdAt: toIso(s.createdAt)!,
  })
  const toRecord = (s: DomainState): DomainRecord | Promise<DomainRecord> => then(store.clicksOf(s.slug), (clicks) => recordOf(s, clicks))
  /** domain.updated (admins only), appended by the store in the status write's own transaction. */
  const domainEvent: DomainEventOf = (s, clicks) => ({ type: 'domain.updated', userId: null, data: recordOf(s, clicks) })

  const withClicks = (d: DomainRecord): DomainRecord | Promise<DomainRecord> => then(store.clicksOf(d.slug), (clicks) => ({ ...d, clicks }))

  /**
   * Reads of each domain, numbered: an answer goes into memory unless a read issued after it
   * has already answered, so on an asynchronous store an older answer arriving late cannot
   * overwrite a newer one, and an answer is not held back waiting for a newer read (a write's
   * own re-read must be in memory when the write answers, even while another node's news of
   * the same write is being re-read).
   */
  const appliedRead = new Map<string, number>()
  let reads = 0
  function refresh(slug: string): DomainState | null | Promise<DomainState | null> {
    const seq = ++reads
    return then(store.get(slug), (s) => {
      if ((appliedRead.get(slug) ?? 0) > seq) return s
      appliedRead.set(slug, seq)
      if (s) {
        states.set(slug, s)
        lookups.set(slug, toLookup(s))
      } else {
        states.delete(slug)
        lookups.delete(slug)
      }
      return s
    })
  }
  function load(createdAt: number, all: DomainState[]) {
    for (const d of defaults.values()) d.createdAt = toIso(createdAt)!
    states.clear()
    lookups.clear()
    for (const slug of defaults.keys()) lookups.set(slug, defaultLookup(slug))
    for (const s of all) {
      states.set(s.slug, s)
      lookups.set(s.slug, toLookup(s))
    }
  }
  const ready = then(store.storeCreatedAt(), (createdAt) => then(store.all(), (all) => load(createdAt, all))) as StoreResult<S, void>

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
    store: {
      get: store.get,
      updateCname: (slug, c) => store.updateCname(slug, c, domainEvent),
      updateSsl: (slug, ssl) => store.updateSsl(slug, ssl, domainEvent),
    },
    cname,
    retryMs: opts.retryMs,
    log,
    now,
    reload: refresh,
    changed: (slug) => emit({ type: 'cname', slug }),
  })

  return {
    /** Settles when the domains are in memory: at once (undefined) on a synchronous store. */
    ready,
    /** Re-reads one domain into memory: another node changed it (the cluster's invalidation bus). */
    reload: refresh,
    /** Re-reads every domain: this node may have missed changes (the bus re-subscribed). */
    reloadAll: () => then(store.storeCreatedAt(), (createdAt) => then(store.all(), (all) => load(createdAt, all))) as StoreResult<S, void>,
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

    create(caller: Caller, input: DomainInput & { domain: string }): StoreResult<S, DomainRecord> {
      requireAdmin(caller)
      const slug = parseDomainName(input.domain)
      if (defaults.has(slug)) throw parameterError(`'domain' ${slug} is a default short domain (server configuration); it exists already`)
      if (slug === settings.apiHost) throw parameterError(`'domain' ${slug} is the API host and cannot be a custom short domain`)
      if (states.has(slug)) throw parameterError(`'domain' ${slug} is already registered`)
      const v = normaliseInput(input)
      return then(store.get(slug), (existing) => {
        if (existing) throw parameterError(`'domain' ${slug} is already registered`)
        const inserted = store.insert(
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
        return then(inserted, () =>
          then(refresh(slug), (s) => {
            log.info('domain created', { domain: slug, by: caller.userId })
            emit({ type: 'created', slug })
            return toRecord(s!)
          }),
        )
      }) as StoreResult<S, DomainRecord>
    },

    get(_caller: Caller, input: string): StoreResult<S, DomainRecord> {
      const slug = normaliseHost(input)
      const d = defaults.get(slug)
      if (d) return withClicks(d) as StoreResult<S, DomainRecord>
      return toRecord(customOrThrow(slug, false)) as StoreResult<S, DomainRecord>
    },

    update(caller: Caller, input: string, body: DomainInput & { archived?: boolean }): StoreResult<S, DomainRecord> {
      requireAdmin(caller)
      const cur = customOrThrow(input, true)
      const v = normaliseInput(body)
      const updated = store.updateSettings(cur.slug, { ...cur, ...v, archived: body.archived ?? cur.archived }, now())
      return then(updated, () =>
        then(refresh(cur.slug), (s) => {
          if (!s) throw notFound(`domain ${cur.slug}`) // deleted meanwhile
          emit({ type: 'updated', slug: cur.slug })
          return toRecord(s)
        }),
      ) as StoreResult<S, DomainRecord>
    },

    remove(caller: Caller, input: string): StoreResult<S, { domain: string }> {
      requireAdmin(caller)
      const cur = customOrThrow(input, true)
      return then(store.remove(cur.slug), () =>
        then(refresh(cur.slug), () => {
          log.info('domain deleted', { domain: cur.slug, by: caller.userId })
          emit({ type: 'deleted', slug: cur.slug })
          return { domain: cur.slug }
        }),
      ) as StoreResult<S, { domain: string }>
    },

    /** Checks the CNAME now; when it is valid and no certificate is served, the next order starts at once. */
    async verify(caller: Caller, input: string): Promise<DomainRecord> {
      requireAdmin(caller)
      const slug = normaliseHost(input)
      const d = defaults.get(slug)
      if (d) return withClicks(d)
      customOrThrow(slug, true)
      const s = await cnameState.verify(slug)
      if (!s) throw notFound(`domain ${slug}`)
      return toRecord(states.get(slug) ?? s)
    },

    list(_caller: Caller, q: ListDomainsInput): StoreResult<S, { domains: DomainRecord[]; total: number }> {
      const records = allOf([...[...defaults.values()].map(withClicks), ...[...states.values()].map(toRecord)])
      return then(records, (all) => page(all, q)) as StoreResult<S, { domains: DomainRecord[]; total: number }>
    },

    /** Counted visits per domain, from each click flush. */
    addClicks(byDomain: Map<string, number>): StoreResult<S, void> {
      return store.addClicks(byDomain) as StoreResult<S, void>
    },

    // For the certificate manager.
    customDomains: (): DomainState[] => [...states.values()],
    stateOf: (slug: string): DomainState | null => states.get(slug) ?? null,
    checkCname: (slug: string) => cnameState.check(slug),
    setSsl(slug: string, ssl: SslState): StoreResult<S, void> {
      if (!states.has(slug)) return undefined as StoreResult<S, void>
      return then(store.updateSsl(slug, ssl, domainEvent), () =>
        then(refresh(slug), () => {
          emit({ type: 'ssl', slug })
        }),
      ) as StoreResult<S, void>
    },
    backoffMs: cnameState.backoffMs,
  }
}
/** The service over the SQLite store (the default), or over any store port (`DomainService<DomainStorePort>`). */
export type DomainService<S extends DomainStorePort = DomainStore> = ReturnType<typeof createDomainService<S>>

/** Filters, sorts and pages the records, as GET /domains answers. */
function page(records: DomainRecord[], q: ListDomainsInput): { domains: DomainRecord[]; total: number } {
  const { limit, offset } = pageWindow(q.page, q.pageSize)
  let all = records
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
}
