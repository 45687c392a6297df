/**
 * Link health on SQLite: URL states, which URLs each link uses, and each link's status
 * (migration 0016). The rules are link-health.rules.ts's; this file reads and writes rows,
 * each change of statuses in one transaction with the reads it was computed from. Lists of
 * keys and seqs travel as one JSON parameter (`json_each`), whatever their length.
 */
import { appendEvents, type NewEvent } from '../events'
import { HEALTH_TYPES, type HealthStatus, type LinkRow, liveRowsWithTags } from '../links'
import type { Awaitable } from '../shared'
import type { Db } from '../store'
import {
  type CheckResult,
  eventTransitions,
  type HealthChangeEvent,
  healthChanges,
  healthKeysOf,
  type LinkRef,
  type LinkStateRow,
  type MappedLink,
  NOTHING_SETTLED,
  resultsPlan,
  type Settled,
  type SettleInput,
  settlePlan,
  type UrlRow,
  type UrlState,
} from './link-health.rules'

/** What the checker reads of a link. */
export type HealthLinkRow = Pick<LinkRow, 'seq' | 'id' | 'domain' | 'key' | 'link_type' | 'data' | 'options' | 'created_at' | 'deleted_at' | 'expires_at'>

const LINK_COLUMNS = 'seq, id, domain, key, link_type, data, options, created_at, deleted_at, expires_at'
const TYPES = HEALTH_TYPES.map((t) => `'${t}'`).join(', ')
/** The kv row holding when the current round of checks started (a restart within the interval resumes it). */
export const ROUND_KEY = 'link_health_round_started_at'

/**
 * The events of changes of links' health (`link.broken`, `link.recovered`; the service makes
 * them, it knows how a record looks); the store appends them to the outbox inside the
 * transaction that settled the change, so a change and its event commit together.
 */
export type HealthEventsOf = (changes: HealthChangeEvent[]) => NewEvent[]

const json = (values: readonly (string | number)[]) => JSON.stringify(values)

export function createHealthStore(db: Db) {
  const liveAfter = db.query<HealthLinkRow, [number, number, number]>(
    `SELECT ${LINK_COLUMNS} FROM links WHERE seq > ? AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ?) AND link_type IN (${TYPES}) ORDER BY seq LIMIT ?`,
  )
  const lastSeq = db.query<{ seq: number | null }, []>('SELECT max(seq) AS seq FROM links')
  const byId = db.query<HealthLinkRow, [string]>(`SELECT ${LINK_COLUMNS} FROM links WHERE id = ?`)
  const urlRows = db.query<UrlRow, [string]>(
    'SELECT url_key, url, status, fails, http_status, error, checked_at FROM health_urls WHERE url_key IN (SELECT value FROM json_each(?))',
  )
  const checkedSince = db.query<{ url_key: string }, [string, number]>(
    'SELECT url_key FROM health_urls WHERE url_key IN (SELECT value FROM json_each(?)) AND checked_at >= ?',
  )
  const addUrl = db.query('INSERT INTO health_urls (url_key, url) VALUES (?, ?) ON CONFLICT (url_key) DO NOTHING')
  const writeUrl = db.query(`INSERT INTO health_urls (url_key, url, status, fails, http_status, error, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (url_key) DO UPDATE SET status = excluded.status, fails = excluded.fails, http_status = excluded.http_status,
      error = excluded.error, checked_at = excluded.checked_at`)
  const mapped = db.query<{ link_seq: number; url_key: string }, [string]>(
    'SELECT link_seq, url_key FROM link_health_urls WHERE link_seq IN (SELECT value FROM json_each(?))',
  )
  const unmap = db.query('DELETE FROM link_health_urls WHERE link_seq = ? AND url_key = ?')
  const map = db.query('INSERT INTO link_health_urls (link_seq, url_key) VALUES (?, ?) ON CONFLICT DO NOTHING')
  const usersOf = db.query<{ link_seq: number; url_key: string }, [string]>(
    'SELECT link_seq, url_key FROM link_health_urls WHERE url_key IN (SELECT value FROM json_each(?))',
  )
  const statusesOf = db.query<{ link_seq: number; status: HealthStatus }, [string]>(
    `SELECT m.link_seq, u.status FROM link_health_urls m JOIN health_urls u ON u.url_key = m.url_key
     WHERE m.link_seq IN (SELECT value FROM json_each(?))`,
  )
  const settleInputs = db.query<
    { seq: number; id: string; domain: string; key: string; deleted_at: number | null; status: HealthStatus | null; since: number | null },
    [string]
  >(
    `SELECT l.seq, l.id, l.domain, l.key, l.deleted_at, h.status, h.since FROM links l LEFT JOIN link_health h ON h.link_seq = l.seq
     WHERE l.seq IN (SELECT value FROM json_each(?))`,
  )
  const writeLink = db.query(
    'INSERT INTO link_health (link_seq, status, since) VALUES (?, ?, ?) ON CONFLICT (link_seq) DO UPDATE SET status = excluded.status, since = excluded.since',
  )
  const linkStates = db.query<{ link_seq: number; status: HealthStatus; since: number }, [string]>(
    'SELECT link_seq, status, since FROM link_health WHERE link_seq IN (SELECT value FROM json_each(?))',
  )
  const brokenAmong = db.query<{ url: string }, [string]>("SELECT url FROM health_urls WHERE url_key IN (SELECT value FROM json_each(?)) AND status = 'broken'")
  const forgetMapping = db.query('DELETE FROM link_health_urls WHERE link_seq IN (SELECT value FROM json_each(?))')
  const forgetStatus = db.query('DELETE FROM link_health WHERE link_seq IN (SELECT value FROM json_each(?))')
  const kvGet = db.query<{ value: string }, [string]>('SELECT value FROM kv WHERE key = ?')
  const kvSet = db.query('INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value')
  const urlKeysAfter = db.query<{ url_key: string }, [string, number]>('SELECT url_key FROM health_urls WHERE url_key > ? ORDER BY url_key LIMIT ?')
  const sweepUrls = db.query(
    'DELETE FROM health_urls WHERE url_key IN (SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM link_health_urls m WHERE m.url_key = health_urls.url_key)',
  )
  const sweepLinks = db.query(
    'DELETE FROM link_health_urls WHERE link_seq IN (SELECT seq FROM links WHERE seq > ? AND seq <= ? AND (deleted_at IS NOT NULL OR (expires_at IS NOT NULL AND expires_at <= ?)))',
  )

  const urlRowsOf = (keys: readonly string[]): Map<string, UrlRow> => new Map(keys.length ? urlRows.all(json(keys)).map((r) => [r.url_key, r]) : [])
  const linkStatesOf = (seqs: readonly number[]): Map<number, LinkStateRow> =>
    new Map(seqs.length ? linkStates.all(json(seqs)).map((r) => [r.link_seq, { status: r.status, since: r.since }]) : [])

  /** Settles links and appends the events of their changes (inside the caller's transaction). */
  function settle(
    seqs: readonly number[],
    now: number,
    eventsOf: HealthEventsOf | undefined,
  ): { transitions: Settled['transitions']; refs: Map<number, LinkRef> } {
    if (seqs.length === 0) return { transitions: [], refs: new Map() }
    const key = json(seqs)
    const statuses = new Map<number, HealthStatus[]>()
    for (const r of statusesOf.all(key)) (statuses.get(r.link_seq) ?? statuses.set(r.link_seq, []).get(r.link_seq)!).push(r.status)
    const inputs: SettleInput[] = settleInputs.all(key).map((r) => ({
      seq: r.seq,
      id: r.id,
      domain: r.domain,
      key: r.key,
      live: r.deleted_at === null,
      stored: r.status === null ? null : { status: r.status, since: r.since! },
    }))
    const plan = settlePlan(inputs, statuses, now)
    for (const w of plan.writes) writeLink.run(w.seq, w.status, w.since)
    appendHealthEvents(plan.transitions, now, eventsOf)
    return { transitions: plan.transitions, refs: new Map(inputs.map((l) => [l.seq, l])) }
  }

  /** The events of these transitions, with the records as they are now (inside the caller's transaction). */
  function appendHealthEvents(transitions: Settled['transitions'], now: number, eventsOf: HealthEventsOf | undefined): void {
    const typed = eventTransitions(transitions)
    if (!eventsOf || typed.length === 0) return
    const seqs = typed.map((t) => t.seq)
    const { rows, tags } = liveRowsWithTags(db, seqs)
    const changes = healthChanges(typed, rows, tags, urlRowsOf(healthKeysOf(rows)), linkStatesOf(seqs))
    if (changes.length) appendEvents(db, eventsOf(changes), now)
  }

  return {
    /** Live links of types with health after `afterSeq`, in seq order: the checker's walk. */
    liveLinks: (afterSeq: number, limit: number, now: number): HealthLinkRow[] => liveAfter.all(afterSeq, now, limit),
    /** The highest link seq (the walk's progress is its seq over this one). */
    lastLinkSeq: (): number => lastSeq.get()?.seq ?? 0,
    linkById: (id: string): HealthLinkRow | null => byId.get(id),
    /** Records each link's URLs as they are now (a row for every new URL), then settles the links (`eventsOf`: their changes' events, in the same transaction). */
    mapLinks(links: readonly MappedLink[], now: number, eventsOf?: HealthEventsOf): Settled {
      if (links.length === 0) return NOTHING_SETTLED
      return db
        .transaction(() => {
          const had = new Map<number, Set<string>>()
          for (const r of mapped.all(json(links.map((l) => l.seq)))) (had.get(r.link_seq) ?? had.set(r.link_seq, new Set()).get(r.link_seq)!).add(r.url_key)
          for (const l of links) {
            const before = had.get(l.seq) ?? new Set<string>()
            const keys = new Set(l.urls.map((u) => u.key))
            // A URL a link maps to has its row (the sweep drops only URLs no link maps to).
            for (const u of l.urls)
              if (!before.has(u.key)) {
                addUrl.run(u.key, u.url)
                map.run(l.seq, u.key)
              }
            for (const k of before) if (!keys.has(k)) unmap.run(l.seq, k)
          }
          return {
            transitions: settle(
              links.map((l) => l.seq),
              now,
              eventsOf,
            ).transitions,
            touched: [],
          }
        })
        .immediate()
    },
    /** Of these URLs, those not checked at or after `since`. */
    dueUrls(keys: readonly string[], since: number): string[] {
      if (keys.length === 0) return []
      const done = new Set(checkedSince.all(json(keys), since).map((r) => r.url_key))
      return keys.filter((k) => !done.has(k))
    },
    /** Applies check results, then settles every link of a URL whose status changed (`eventsOf`: as mapLinks). */
    recordResults(results: readonly CheckResult[], now: number, eventsOf?: HealthEventsOf): Settled {
      if (results.length === 0) return NOTHING_SETTLED
      return db
        .transaction(() => {
          const prev = new Map<string, UrlState>()
          for (const r of urlRows.all(json(results.map((r) => r.key)))) prev.set(r.url_key, r)
          const plan = resultsPlan(prev, results)
          for (const w of plan.writes) writeUrl.run(w.key, w.url, w.status, w.fails, w.httpStatus, w.error, w.checkedAt)
          if (plan.changed.length === 0) return NOTHING_SETTLED
          const users = usersOf.all(json(plan.changed))
          const { transitions, refs } = settle([...new Set(users.map((u) => u.link_seq))], now, eventsOf)
          const flipped = new Set(plan.flipped)
          const touched = [...new Set(users.filter((u) => flipped.has(u.url_key)).map((u) => u.link_seq))].flatMap((s) => refs.get(s) ?? [])
          return { transitions, touched }
        })
        .immediate()
    },
    /** Links that are gone lose their URLs and status. */
    forget(seqs: readonly number[]): void {
      if (seqs.length === 0) return
      db.transaction(() => {
        forgetMapping.run(json(seqs))
        forgetStatus.run(json(seqs))
      }).immediate()
    },
    urlRows: urlRowsOf,
    linkStates: linkStatesOf,
    /** What the records of these links show: their URLs' rows and their statuses, as of one moment. */
    recordRows(keys: readonly string[], seqs: readonly number[]): { urls: Map<string, UrlRow>; links: Map<number, LinkStateRow> } {
      return { urls: urlRowsOf(keys), links: linkStatesOf(seqs) }
    },
    /** The broken ones among these URLs (the redirect's fallback check, on a cache miss). */
    brokenAmong(keys: readonly string[]): string[] {
      return keys.length ? brokenAmong.all(json(keys)).map((r) => r.url) : []
    },
    roundStartedAt(): number | null {
      const v = kvGet.get(ROUND_KEY)?.value
      return v === undefined ? null : Number(v)
    },
    setRoundStartedAt(ms: number): void {
      kvSet.run(ROUND_KEY, String(ms))
    },
    /**
     * After a round, a slice at a time (each a few milliseconds, whatever the number of links):
     * links of seq in (afterSeq, afterSeq + span] no longer live lose their URLs.
     */
    sweepLinks(afterSeq: number, span: number, now: number): void {
      sweepLinks.run(afterSeq, afterSeq + span, now)
    },
    /** URLs no link uses among the next `limit` after `afterKey` are dropped; answers the last key looked at, or null at the end. */
    sweepUrls(afterKey: string, limit: number): string | null {
      const keys = urlKeysAfter.all(afterKey, limit).map((r) => r.url_key)
      if (keys.length === 0) return null
      sweepUrls.run(json(keys))
      return keys.at(-1)!
    },
  }
}
export type HealthStore = ReturnType<typeof createHealthStore>
/** The port both stores implement (docs/adr/0010). */
export type HealthStorePort = Awaitable<HealthStore>
