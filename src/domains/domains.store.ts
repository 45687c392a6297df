import { appendEvents, type NewEvent } from '../events'
import type { Awaitable } from '../shared'
import type { Db } from '../store'
import type { CnameStatus, SslStatus } from './domains.schema'

/** A `domains` row as both stores return it (PostgreSQL casts its bigints to float8). */
export interface DomainRow {
  slug: string
  destination: string | null
  not_found_url: string | null
  expired_url: string | null
  asset_links: string | null
  apple_app_site_association: string | null
  archived: number
  cname_status: CnameStatus
  cname_detail: string | null
  cname_checked_at: number | null
  cname_attempts: number
  cname_next_at: number | null
  ssl_status: SslStatus
  ssl_error: string | null
  ssl_attempts: number
  ssl_next_at: number | null
  created_by: string
  created_at: number
  updated_at: number
}

/** A custom domain with its verification and certificate state (times in ms). */
export interface DomainState {
  slug: string
  destination: string | null
  notFoundUrl: string | null
  expiredUrl: string | null
  assetLinks: string | null
  appleAppSiteAssociation: string | null
  archived: boolean
  cnameStatus: CnameStatus
  cnameDetail: string | null
  cnameCheckedAt: number | null
  cnameAttempts: number
  cnameNextAt: number | null
  sslStatus: SslStatus
  sslError: string | null
  sslAttempts: number
  sslNextAt: number | null
  createdBy: string
  createdAt: number
  updatedAt: number
}

export const toState = (r: DomainRow): DomainState => ({
  slug: r.slug,
  destination: r.destination,
  notFoundUrl: r.not_found_url,
  expiredUrl: r.expired_url,
  assetLinks: r.asset_links,
  appleAppSiteAssociation: r.apple_app_site_association,
  archived: r.archived === 1,
  cnameStatus: r.cname_status,
  cnameDetail: r.cname_detail,
  cnameCheckedAt: r.cname_checked_at,
  cnameAttempts: r.cname_attempts,
  cnameNextAt: r.cname_next_at,
  sslStatus: r.ssl_status,
  sslError: r.ssl_error,
  sslAttempts: r.ssl_attempts,
  sslNextAt: r.ssl_next_at,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
})

export type DomainSettings = Pick<DomainState, 'destination' | 'notFoundUrl' | 'expiredUrl' | 'assetLinks' | 'appleAppSiteAssociation' | 'archived'>
export type CnameState = Pick<DomainState, 'cnameStatus' | 'cnameDetail' | 'cnameCheckedAt' | 'cnameAttempts' | 'cnameNextAt'>
export type SslState = Pick<DomainState, 'sslStatus' | 'sslError' | 'sslAttempts' | 'sslNextAt'>

/**
 * The domain.updated event of a domain whose cnameStatus or sslStatus a write changed (the
 * service makes it: it knows how a record looks); the store appends it in the write's transaction.
 */
export type DomainEventOf = (state: DomainState, clicks: number) => NewEvent

/** Whether a write changed what domain.updated tells of. */
export const statusChanged = (before: Pick<DomainRow, 'cname_status' | 'ssl_status'>, after: Pick<DomainRow, 'cname_status' | 'ssl_status'>) =>
  before.cname_status !== after.cname_status || before.ssl_status !== after.ssl_status

export function createDomainStore(db: Db) {
  const clicksOf = db.query<{ clicks: number }, [string]>('SELECT clicks FROM domain_clicks WHERE slug = ?')
  const addClicks = db.query('INSERT INTO domain_clicks (slug, clicks) VALUES (?, ?) ON CONFLICT(slug) DO UPDATE SET clicks = clicks + excluded.clicks')
  const dropClicks = db.query('DELETE FROM domain_clicks WHERE slug = ?')
  const bySlug = db.query<DomainRow, [string]>('SELECT * FROM domains WHERE slug = ?')
  const all = db.query<DomainRow, []>('SELECT * FROM domains')
  const insert = db.query(
    `INSERT INTO domains (slug, destination, not_found_url, expired_url, asset_links, apple_app_site_association,
       cname_next_at, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const updateSettings = db.query(
    `UPDATE domains SET destination = ?, not_found_url = ?, expired_url = ?, asset_links = ?, apple_app_site_association = ?,
       archived = ?, updated_at = ? WHERE slug = ?`,
  )
  const updateCname = db.query(
    'UPDATE domains SET cname_status = ?, cname_detail = ?, cname_checked_at = ?, cname_attempts = ?, cname_next_at = ? WHERE slug = ?',
  )
  const updateSsl = db.query('UPDATE domains SET ssl_status = ?, ssl_error = ?, ssl_attempts = ?, ssl_next_at = ? WHERE slug = ?')
  const remove = db.query('DELETE FROM domains WHERE slug = ?')
  const storeCreated = db.query<{ at: number }, []>('SELECT applied_at AS at FROM schema_migrations WHERE id = 1')
  /** Runs a status write; with `eventOf`, in a transaction that appends domain.updated when a status changed. */
  const announced = (slug: string, eventOf: DomainEventOf | undefined, write: () => unknown) => {
    if (!eventOf) return void write()
    db.transaction(() => {
      const before = bySlug.get(slug)
      write()
      const after = bySlug.get(slug)
      if (before && after && statusChanged(before, after)) appendEvents(db, [eventOf(toState(after), clicksOf.get(slug)?.clicks ?? 0)], Date.now())
    }).immediate()
  }

  return {
    get: (slug: string) => {
      const r = bySlug.get(slug)
      return r ? toState(r) : null
    },
    all: () => all.all().map(toState),
    insert(slug: string, s: Omit<DomainSettings, 'archived'>, createdBy: string, now: number) {
      // cname_next_at = now: the first CNAME check is due at once.
      insert.run(slug, s.destination, s.notFoundUrl, s.expiredUrl, s.assetLinks, s.appleAppSiteAssociation, now, createdBy, now, now)
    },
    updateSettings(slug: string, s: DomainSettings, now: number): void {
      updateSettings.run(s.destination, s.notFoundUrl, s.expiredUrl, s.assetLinks, s.appleAppSiteAssociation, s.archived ? 1 : 0, now, slug)
    },
    updateCname(slug: string, c: CnameState, eventOf?: DomainEventOf): void {
      announced(slug, eventOf, () => updateCname.run(c.cnameStatus, c.cnameDetail, c.cnameCheckedAt, c.cnameAttempts, c.cnameNextAt, slug))
    },
    updateSsl(slug: string, s: SslState, eventOf?: DomainEventOf): void {
      announced(slug, eventOf, () => updateSsl.run(s.sslStatus, s.sslError, s.sslAttempts, s.sslNextAt, slug))
    },
    remove(slug: string): boolean {
      dropClicks.run(slug)
      return remove.run(slug).changes > 0
    },
    clicksOf: (slug: string) => clicksOf.get(slug)?.clicks ?? 0,
    addClicks: db.transaction((byDomain: Map<string, number>): void => {
      for (const [slug, n] of byDomain) addClicks.run(slug, n)
    }),
    /** When this store was created: the createdAt shown for default domains. */
    storeCreatedAt: () => storeCreated.get()?.at ?? Date.now(),
  }
}
export type DomainStore = ReturnType<typeof createDomainStore>
/** What the domain service needs of a store: the SQLite one above, or PostgreSQL's (domains.store.pg.ts). */
export type DomainStorePort = Awaitable<DomainStore>
