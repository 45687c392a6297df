/**
 * The domain store on PostgreSQL (docs/adr/0010): the SQLite store's methods and results, in
 * PostgreSQL's SQL against migration 0001. bigint columns are cast to float8 (epoch ms and
 * click counts fit exactly), because Bun.SQL returns int8 as strings.
 *
 * Every write of a domain's state announces its host on the `domains` channel inside its own
 * transaction (`publish`, the cluster's invalidation bus), so every node re-reads it at commit
 * and never after a rollback.
 */
import type { SQL } from 'bun'
import { appendEventsPg, eventsAppended } from '../events'
import type { CnameState, DomainEventOf, DomainRow, DomainSettings, DomainState, DomainStorePort, SslState } from './domains.store'
import { statusChanged, toState } from './domains.store'

const COLUMNS = `slug, destination, not_found_url, expired_url, asset_links, apple_app_site_association, archived::int AS archived,
  cname_status, cname_detail, cname_checked_at::float8 AS cname_checked_at, cname_attempts, cname_next_at::float8 AS cname_next_at,
  ssl_status, ssl_error, ssl_attempts, ssl_next_at::float8 AS ssl_next_at, created_by, created_at::float8 AS created_at,
  updated_at::float8 AS updated_at`

export interface PgDomainStoreOptions {
  /** The invalidation bus's publish (src/store); absent in a store no other node shares. */
  publish?: (tx: SQL, channel: string, keys: string | readonly string[]) => Promise<void>
}

/** The channel and key other nodes hear a domain's change on. */
export const DOMAINS_CHANNEL = 'domains'

export function createPgDomainStore(sql: SQL, { publish }: PgDomainStoreOptions = {}): DomainStorePort {
  /** Runs a write of `slug` and its announcement in one transaction; answers the write's rows. */
  const written = (slug: string, write: (tx: SQL) => Promise<unknown[]>): Promise<unknown[]> =>
    sql.begin(async (tx) => {
      const rows = await write(tx)
      if (publish && rows.length > 0) await publish(tx, DOMAINS_CHANNEL, slug)
      return rows
    }) as Promise<unknown[]>
  const row = async (db: SQL, slug: string, lock = '') =>
    ((await db.unsafe(`SELECT ${COLUMNS} FROM domains WHERE slug = $1${lock}`, [slug]))[0] as DomainRow | undefined) ?? null
  /** A status write; with `eventOf`, domain.updated is appended in its transaction when a status changed. */
  const announced = async (slug: string, eventOf: DomainEventOf | undefined, write: (tx: SQL) => Promise<unknown[]>) => {
    if (!eventOf) return written(slug, write)
    let appended = false
    const rows = await written(slug, async (tx) => {
      const before = await row(tx, slug, ' FOR UPDATE')
      const result = await write(tx)
      const after = await row(tx, slug)
      if (before && after && statusChanged(before, after)) {
        const [clicks] = await tx`SELECT clicks::float8 AS clicks FROM domain_clicks WHERE slug = ${slug}`
        await appendEventsPg(tx, [eventOf(toState(after), (clicks?.clicks as number | undefined) ?? 0)], Date.now())
        appended = true
      }
      return result
    })
    if (appended) eventsAppended()
    return rows
  }
  return {
    async get(slug: string): Promise<DomainState | null> {
      const [row] = await sql.unsafe(`SELECT ${COLUMNS} FROM domains WHERE slug = $1`, [slug])
      return row ? toState(row as DomainRow) : null
    },
    async all(): Promise<DomainState[]> {
      const rows = await sql.unsafe(`SELECT ${COLUMNS} FROM domains`)
      return (rows as DomainRow[]).map(toState)
    },
    async insert(slug: string, s: Omit<DomainSettings, 'archived'>, createdBy: string, now: number): Promise<void> {
      // cname_next_at = now: the first CNAME check is due at once.
      await written(
        slug,
        (tx) => tx`INSERT INTO domains (slug, destination, not_found_url, expired_url, asset_links, apple_app_site_association,
          cname_next_at, created_by, created_at, updated_at)
        VALUES (${slug}, ${s.destination}, ${s.notFoundUrl}, ${s.expiredUrl}, ${s.assetLinks}, ${s.appleAppSiteAssociation},
          ${now}, ${createdBy}, ${now}, ${now}) RETURNING 1`,
      )
    },
    async updateSettings(slug: string, s: DomainSettings, now: number): Promise<void> {
      await written(
        slug,
        (tx) => tx`UPDATE domains SET destination = ${s.destination}, not_found_url = ${s.notFoundUrl}, expired_url = ${s.expiredUrl},
          asset_links = ${s.assetLinks}, apple_app_site_association = ${s.appleAppSiteAssociation}, archived = ${s.archived ? 1 : 0},
          updated_at = ${now}
        WHERE slug = ${slug} RETURNING 1`,
      )
    },
    async updateCname(slug: string, c: CnameState, eventOf?: DomainEventOf): Promise<void> {
      await announced(
        slug,
        eventOf,
        (tx) => tx`UPDATE domains SET cname_status = ${c.cnameStatus}, cname_detail = ${c.cnameDetail}, cname_checked_at = ${c.cnameCheckedAt},
          cname_attempts = ${c.cnameAttempts}, cname_next_at = ${c.cnameNextAt}
        WHERE slug = ${slug} RETURNING 1`,
      )
    },
    async updateSsl(slug: string, s: SslState, eventOf?: DomainEventOf): Promise<void> {
      await announced(
        slug,
        eventOf,
        (tx) => tx`UPDATE domains SET ssl_status = ${s.sslStatus}, ssl_error = ${s.sslError}, ssl_attempts = ${s.sslAttempts},
          ssl_next_at = ${s.sslNextAt}
        WHERE slug = ${slug} RETURNING 1`,
      )
    },
    /** The domain and its click count go together, in one statement. */
    async remove(slug: string): Promise<boolean> {
      const rows = await written(
        slug,
        (tx) => tx`WITH clicks AS (DELETE FROM domain_clicks WHERE slug = ${slug})
        DELETE FROM domains WHERE slug = ${slug} RETURNING 1`,
      )
      return rows.length > 0
    },
    async clicksOf(slug: string): Promise<number> {
      const [row] = await sql`SELECT clicks::float8 AS clicks FROM domain_clicks WHERE slug = ${slug}`
      return (row?.clicks as number | undefined) ?? 0
    },
    /** One statement for the whole flush: the counts travel as one JSON object. */
    async addClicks(byDomain: Map<string, number>): Promise<void> {
      if (byDomain.size === 0) return
      await sql`INSERT INTO domain_clicks (slug, clicks)
        SELECT key, value::bigint FROM json_each_text(${JSON.stringify(Object.fromEntries(byDomain))}::text::json)
        ON CONFLICT (slug) DO UPDATE SET clicks = domain_clicks.clicks + excluded.clicks`
    },
    /** When this store was created: the createdAt shown for default domains. */
    async storeCreatedAt(): Promise<number> {
      const [row] = await sql`SELECT applied_at::float8 AS at FROM schema_migrations WHERE id = 1`
      return (row?.at as number | undefined) ?? Date.now()
    },
  }
}
