/**
 * Link health on PostgreSQL (docs/adr/0010): the SQLite store's methods and answers against
 * migration 0008. A change of statuses runs under one transaction-scoped advisory lock, so
 * the checker and an on-demand check on another node never both see (and announce) the same
 * transition. Links whose redirects change are announced on the `links` channel inside the
 * transaction: every node drops its cached copy at commit. Lists travel as one JSON parameter;
 * bigint columns come back as float8 (Bun.SQL answers int8 as strings).
 */
import type { SQL } from 'bun'
import { appendEventsPg, eventsAppended } from '../events'
import { HEALTH_TYPES, type HealthStatus, LINKS_CHANNEL, liveRowsWithTagsPg } from '../links'
import type { InvalidationBus } from '../store'
import {
  type CheckResult,
  eventTransitions,
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
import type { HealthEventsOf, HealthLinkRow, HealthStorePort } from './link-health.store'
import { ROUND_KEY } from './link-health.store'

const LINK_COLUMNS =
  'seq::float8 AS seq, id, domain, key, link_type, data, options, created_at::float8 AS created_at, deleted_at::float8 AS deleted_at, expires_at::float8 AS expires_at'
const TYPES = HEALTH_TYPES.map((t) => `'${t}'`).join(', ')
const URL_COLUMNS = 'url_key, url, status, fails, http_status, error, checked_at::float8 AS checked_at'
const KEYS = '(SELECT jsonb_array_elements_text($1::text::jsonb))'
const SEQS = '(SELECT jsonb_array_elements_text($1::text::jsonb)::bigint)'
/** Any fixed number no other code locks: health changes one at a time across nodes. */
const HEALTH_LOCK_KEY = 7_240_514_027n

const json = (values: readonly (string | number)[]) => JSON.stringify(values)

async function urlRowsIn(db: SQL, keys: readonly string[]): Promise<Map<string, UrlRow>> {
  if (keys.length === 0) return new Map()
  const rows = (await db.unsafe(`SELECT ${URL_COLUMNS} FROM health_urls WHERE url_key IN ${KEYS}`, [json(keys)])) as UrlRow[]
  return new Map(rows.map((r) => [r.url_key, r]))
}

async function linkStatesIn(db: SQL, seqs: readonly number[]): Promise<Map<number, LinkStateRow>> {
  if (seqs.length === 0) return new Map()
  const rows = await db.unsafe(`SELECT link_seq::float8 AS link_seq, status, since::float8 AS since FROM link_health WHERE link_seq IN ${SEQS}`, [json(seqs)])
  return new Map((rows as { link_seq: number; status: HealthStatus; since: number }[]).map((r) => [r.link_seq, { status: r.status, since: r.since }]))
}

export function createPgHealthStore(sql: SQL, { publish }: { publish?: InvalidationBus['publish'] } = {}): HealthStorePort {
  /** Settles links and appends the events of their changes (inside `tx`). */
  async function settle(
    tx: SQL,
    seqs: readonly number[],
    now: number,
    eventsOf: HealthEventsOf | undefined,
  ): Promise<{ transitions: Settled['transitions']; refs: Map<number, LinkRef> }> {
    if (seqs.length === 0) return { transitions: [], refs: new Map() }
    const statuses = new Map<number, HealthStatus[]>()
    const rows = await tx.unsafe(
      `SELECT m.link_seq::float8 AS link_seq, u.status FROM link_health_urls m JOIN health_urls u ON u.url_key = m.url_key WHERE m.link_seq IN ${SEQS}`,
      [json(seqs)],
    )
    for (const r of rows as { link_seq: number; status: HealthStatus }[])
      (statuses.get(r.link_seq) ?? statuses.set(r.link_seq, []).get(r.link_seq)!).push(r.status)
    const links = await tx.unsafe(
      `SELECT l.seq::float8 AS seq, l.id, l.domain, l.key, l.deleted_at, h.status, h.since::float8 AS since
       FROM links l LEFT JOIN link_health h ON h.link_seq = l.seq WHERE l.seq IN ${SEQS}`,
      [json(seqs)],
    )
    const inputs: SettleInput[] = (
      links as { seq: number; id: string; domain: string; key: string; deleted_at: unknown; status: HealthStatus | null; since: number | null }[]
    ).map((r) => ({
      seq: r.seq,
      id: r.id,
      domain: r.domain,
      key: r.key,
      live: r.deleted_at === null,
      stored: r.status === null ? null : { status: r.status, since: r.since! },
    }))
    const plan = settlePlan(inputs, statuses, now)
    for (const w of plan.writes)
      await tx`INSERT INTO link_health (link_seq, status, since) VALUES (${w.seq}, ${w.status}, ${w.since})
        ON CONFLICT (link_seq) DO UPDATE SET status = excluded.status, since = excluded.since`
    await appendHealthEvents(tx, plan.transitions, now, eventsOf)
    return { transitions: plan.transitions, refs: new Map(inputs.map((l) => [l.seq, l])) }
  }

  /** The events of these transitions, with the records as they are now in `tx`. */
  async function appendHealthEvents(tx: SQL, transitions: Settled['transitions'], now: number, eventsOf: HealthEventsOf | undefined): Promise<void> {
    const typed = eventTransitions(transitions)
    if (!eventsOf || typed.length === 0) return
    const seqs = typed.map((t) => t.seq)
    const { rows, tags } = await liveRowsWithTagsPg(tx, seqs)
    const changes = healthChanges(typed, rows, tags, await urlRowsIn(tx, healthKeysOf(rows)), await linkStatesIn(tx, seqs))
    if (changes.length) await appendEventsPg(tx, eventsOf(changes), now)
  }

  /** Drops the cached redirects of these links on every node, at commit. */
  const announce = async (tx: SQL, s: Settled) => {
    const keys = new Set([...s.touched, ...s.transitions.map((t) => t.link)].map((l) => `${l.domain}/${l.key}`))
    if (publish && keys.size) await publish(tx, LINKS_CHANNEL, [...keys])
  }

  const locked = <T>(fn: (tx: SQL) => Promise<T>) =>
    sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${HEALTH_LOCK_KEY.toString()}::bigint)`
      return fn(tx)
    })
  /** A settling write under the lock; this node's event readers are woken once it committed with events. */
  const settling = async (eventsOf: HealthEventsOf | undefined, fn: (tx: SQL) => Promise<Settled>): Promise<Settled> => {
    const settled = await locked(fn)
    if (eventsOf && eventTransitions(settled.transitions).length) eventsAppended()
    return settled
  }

  return {
    async liveLinks(afterSeq: number, limit: number, now: number): Promise<HealthLinkRow[]> {
      const rows = await sql.unsafe(
        `SELECT ${LINK_COLUMNS} FROM links WHERE seq > $1 AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > $2) AND link_type IN (${TYPES}) ORDER BY seq LIMIT $3`,
        [afterSeq, now, limit],
      )
      return [...rows] as HealthLinkRow[]
    },
    async lastLinkSeq(): Promise<number> {
      const [row] = await sql`SELECT coalesce(max(seq), 0)::float8 AS seq FROM links`
      return row.seq as number
    },
    async linkById(id: string): Promise<HealthLinkRow | null> {
      const [row] = await sql.unsafe(`SELECT ${LINK_COLUMNS} FROM links WHERE id = $1`, [id])
      return (row as HealthLinkRow | undefined) ?? null
    },
    async mapLinks(links: readonly MappedLink[], now: number, eventsOf?: HealthEventsOf): Promise<Settled> {
      if (links.length === 0) return NOTHING_SETTLED
      return settling(eventsOf, async (tx) => {
        const seqs = links.map((l) => l.seq)
        const had = new Map<number, Set<string>>()
        for (const r of (await tx.unsafe(`SELECT link_seq::float8 AS link_seq, url_key FROM link_health_urls WHERE link_seq IN ${SEQS}`, [json(seqs)])) as {
          link_seq: number
          url_key: string
        }[])
          (had.get(r.link_seq) ?? had.set(r.link_seq, new Set()).get(r.link_seq)!).add(r.url_key)
        for (const l of links) {
          const before = had.get(l.seq) ?? new Set<string>()
          const keys = new Set(l.urls.map((u) => u.key))
          // A URL a link maps to has its row (the sweep drops only URLs no link maps to, under the same lock).
          for (const u of l.urls)
            if (!before.has(u.key)) {
              await tx`INSERT INTO health_urls (url_key, url) VALUES (${u.key}, ${u.url}) ON CONFLICT (url_key) DO NOTHING`
              await tx`INSERT INTO link_health_urls (link_seq, url_key) VALUES (${l.seq}, ${u.key}) ON CONFLICT DO NOTHING`
            }
          for (const k of before) if (!keys.has(k)) await tx`DELETE FROM link_health_urls WHERE link_seq = ${l.seq} AND url_key = ${k}`
        }
        const settled = { transitions: (await settle(tx, seqs, now, eventsOf)).transitions, touched: [] }
        await announce(tx, settled)
        return settled
      })
    },
    async dueUrls(keys: readonly string[], since: number): Promise<string[]> {
      if (keys.length === 0) return []
      const rows = await sql.unsafe(`SELECT url_key FROM health_urls WHERE url_key IN ${KEYS} AND checked_at >= $2`, [json(keys), since])
      const done = new Set((rows as { url_key: string }[]).map((r) => r.url_key))
      return keys.filter((k) => !done.has(k))
    },
    async recordResults(results: readonly CheckResult[], now: number, eventsOf?: HealthEventsOf): Promise<Settled> {
      if (results.length === 0) return NOTHING_SETTLED
      return settling(eventsOf, async (tx) => {
        const prev = new Map<string, UrlState>()
        for (const r of (await tx.unsafe(`SELECT ${URL_COLUMNS} FROM health_urls WHERE url_key IN ${KEYS}`, [json(results.map((r) => r.key))])) as UrlRow[])
          prev.set(r.url_key, r)
        const plan = resultsPlan(prev, results)
        for (const w of plan.writes)
          await tx`INSERT INTO health_urls (url_key, url, status, fails, http_status, error, checked_at)
            VALUES (${w.key}, ${w.url}, ${w.status}, ${w.fails}, ${w.httpStatus}, ${w.error}, ${w.checkedAt})
            ON CONFLICT (url_key) DO UPDATE SET status = excluded.status, fails = excluded.fails, http_status = excluded.http_status,
              error = excluded.error, checked_at = excluded.checked_at`
        if (plan.changed.length === 0) return NOTHING_SETTLED
        const users = (await tx.unsafe(`SELECT link_seq::float8 AS link_seq, url_key FROM link_health_urls WHERE url_key IN ${KEYS}`, [
          json(plan.changed),
        ])) as { link_seq: number; url_key: string }[]
        const { transitions, refs } = await settle(tx, [...new Set(users.map((u) => u.link_seq))], now, eventsOf)
        const flipped = new Set(plan.flipped)
        const touched = [...new Set(users.filter((u) => flipped.has(u.url_key)).map((u) => u.link_seq))].flatMap((s) => refs.get(s) ?? [])
        const settled = { transitions, touched }
        await announce(tx, settled)
        return settled
      })
    },
    async forget(seqs: readonly number[]): Promise<void> {
      if (seqs.length === 0) return
      await sql.begin(async (tx) => {
        await tx.unsafe(`DELETE FROM link_health_urls WHERE link_seq IN ${SEQS}`, [json(seqs)])
        await tx.unsafe(`DELETE FROM link_health WHERE link_seq IN ${SEQS}`, [json(seqs)])
      })
    },
    urlRows: (keys: readonly string[]) => urlRowsIn(sql, keys),
    linkStates: (seqs: readonly number[]) => linkStatesIn(sql, seqs),
    /** One statement, so one snapshot: a status and the URL rows it came from never disagree. */
    async recordRows(keys: readonly string[], seqs: readonly number[]): Promise<{ urls: Map<string, UrlRow>; links: Map<number, LinkStateRow> }> {
      const [row] = await sql.unsafe(
        `SELECT
          (SELECT coalesce(json_agg(u), '[]') FROM (SELECT ${URL_COLUMNS} FROM health_urls WHERE url_key IN (SELECT jsonb_array_elements_text($1::text::jsonb))) u) AS urls,
          (SELECT coalesce(json_agg(h), '[]') FROM (SELECT link_seq::float8 AS link_seq, status, since::float8 AS since FROM link_health
            WHERE link_seq IN (SELECT jsonb_array_elements_text($2::text::jsonb)::bigint)) h) AS links`,
        [json(keys), json(seqs)],
      )
      const parse = <T>(v: unknown): T[] => (typeof v === 'string' ? JSON.parse(v) : v) as T[]
      return {
        urls: new Map(parse<UrlRow>(row.urls).map((r) => [r.url_key, r])),
        links: new Map(
          parse<{ link_seq: number; status: HealthStatus; since: number }>(row.links).map((r) => [r.link_seq, { status: r.status, since: r.since }]),
        ),
      }
    },
    async brokenAmong(keys: readonly string[]): Promise<string[]> {
      if (keys.length === 0) return []
      const rows = await sql.unsafe(`SELECT url FROM health_urls WHERE url_key IN ${KEYS} AND status = 'broken'`, [json(keys)])
      return (rows as { url: string }[]).map((r) => r.url)
    },
    async roundStartedAt(): Promise<number | null> {
      const [row] = await sql`SELECT value FROM kv WHERE key = ${ROUND_KEY}`
      return row ? Number(row.value) : null
    },
    async setRoundStartedAt(ms: number): Promise<void> {
      await sql`INSERT INTO kv (key, value) VALUES (${ROUND_KEY}, ${String(ms)}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`
    },
    async sweepLinks(afterSeq: number, span: number, now: number): Promise<void> {
      await sql`DELETE FROM link_health_urls WHERE link_seq IN (SELECT seq FROM links WHERE seq > ${afterSeq} AND seq <= ${afterSeq + span}
        AND (deleted_at IS NOT NULL OR (expires_at IS NOT NULL AND expires_at <= ${now})))`
    },
    /** One statement: it runs in the database, not on this thread, so there is nothing to slice (`limit` is SQLite's). */
    async sweepUrls(afterKey: string, _limit: number): Promise<string | null> {
      if (afterKey !== '') return null
      // Under the lock: a link taking a URL up (mapLinks) and the sweep never cross.
      await locked((tx) => tx`DELETE FROM health_urls h WHERE NOT EXISTS (SELECT 1 FROM link_health_urls m WHERE m.url_key = h.url_key)`)
      return null
    },
  }
}
