/** The statistics planner alone: queries → which rollup rows (or raw events) answer them. */
import { describe, expect, test } from 'bun:test'
import { AppError } from '../shared'
import { type LinkSet, type PlanFacts, planQuery, planReads, type ReadPlan, type Scope } from './stats.plan'
import type { StatisticsQuery } from './stats.schema'

const NOW = Date.parse('2025-04-01T00:00:00Z')
const iso = (t: number) => new Date(t).toISOString().replace(':00.000Z', 'Z').replace('2025-', '')

/** Stored data as the planner sees it: two owners and one link type have rollups; 12 links match any set unless told. */
function facts(over: Partial<PlanFacts> = {}): PlanFacts {
  const nums: Record<string, number> = { usr_alice: 1, usr_bob: 2, 'type:text': 3 }
  return { groupNum: (name) => nums[name] ?? null, countLinks: () => 12, firstClickHour: () => Date.parse('2025-03-30T05:00:00Z'), ...over }
}

function scopeName(s: Scope): string {
  if (s.kind === 'all') return 'all'
  if (s.kind === 'group') return `group ${s.value} #${s.num}`
  return `links${s.everyLink ? ' (every)' : ''}${s.wide ? ' wide' : ''}${s.busy === true ? ' busy' : s.busy === false ? ' not busy' : ''}`
}
/** A plan as `scope  source  from..to` lines: source is a rollup table or `raw`. */
const readsOf = (plan: ReadPlan | null) => plan?.reads.map((r) => `${scopeName(r.scope)}  ${r.level?.table ?? 'raw'}  ${iso(r.from)}..${iso(r.to)}`) ?? null

const plan = (q: StatisticsQuery, links: LinkSet = {}, f = facts()) => planReads(planQuery(q, NOW), links, f)

const MARCH = { start: '2025-03-01T00:00:00Z', end: '2025-03-31T00:00:00Z' }

describe('planReads: which rows answer a query', () => {
  const cases: { name: string; q: StatisticsQuery; links?: LinkSet; f?: PlanFacts; dim: number | null; reads: string[] | null; bounds?: string[] }[] = [
    {
      name: 'count of every link over whole days: one read of the all-links day totals',
      q: MARCH,
      dim: 0,
      reads: ['all  stats_day  03-01T00:00Z..03-31T00:00Z'],
    },
    {
      name: 'count from a sub-quarter instant: raw edge, then quarter, hour and day totals, then the raw tail',
      q: { start: '2025-03-01T10:20:00.500Z', end: '2025-03-03T01:00:00.250Z' },
      dim: 0,
      reads: [
        'all  raw  03-01T10:20:00.500Z..03-01T10:30Z',
        'all  raw  03-03T01:00Z..03-03T01:00:00.250Z',
        'all  stats_quarter  03-01T10:30Z..03-01T11:00Z',
        'all  stats_hour  03-01T11:00Z..03-02T00:00Z',
        'all  stats_hour  03-03T00:00Z..03-03T01:00Z',
        'all  stats_day  03-02T00:00Z..03-03T00:00Z',
      ],
    },
    {
      name: "a member's count: their owner group's totals",
      q: { ...MARCH, interval: '30d' },
      links: { ownerId: 'usr_alice' },
      dim: 0,
      reads: ['group usr_alice #1  stats_day  03-01T00:00Z..03-31T00:00Z'],
    },
    {
      name: "a member's breakdown by country: the group's day rows of dim country, raw edges",
      q: { start: '2025-03-01T12:00:00Z', end: '2025-03-03T00:00:00Z', groupBy: 'country' },
      links: { ownerId: 'usr_alice' },
      dim: 1,
      reads: ['group usr_alice #1  raw  03-01T12:00Z..03-02T00:00Z', 'group usr_alice #1  stats_day  03-02T00:00Z..03-03T00:00Z'],
    },
    {
      name: "a link type's count (admin): the type group",
      q: { ...MARCH, linkType: 'text' },
      links: { linkType: 'text' },
      dim: 0,
      reads: ['group text #3  stats_day  03-01T00:00Z..03-31T00:00Z'],
    },
    {
      name: 'a group that never had a click: no rollup read (its raw edges find nothing)',
      q: { start: '2025-03-01T00:20:00Z', end: '2025-03-02T00:00:00Z' },
      links: { ownerId: 'usr_carol' },
      dim: 0,
      reads: ['group usr_carol #null  raw  03-01T00:20Z..03-01T00:30Z'],
    },
    {
      name: 'one link by city: the busy links’ day rows of dim city, the other links’ raw events',
      q: { ...MARCH, groupBy: 'city' },
      links: { seqs: [7] },
      dim: 3,
      reads: ['links busy  stats_day  03-01T00:00Z..03-31T00:00Z', 'links not busy  raw  03-01T00:00Z..03-31T00:00Z'],
    },
    {
      name: 'one link’s count: its hour, day and 7-day totals',
      q: { start: '2025-03-01T00:00:00Z', end: '2025-03-20T05:00:00Z' },
      links: { seqs: [7] },
      dim: 0,
      reads: ['links  stats_hour  03-20T00:00Z..03-20T05:00Z', 'links  stats_day  03-01T00:00Z..03-06T00:00Z', 'links  stats_week  03-06T00:00Z..03-20T00:00Z'],
    },
    {
      name: "an admin's groupBy=link over every link: link totals, no membership check, read in time order",
      q: { ...MARCH, groupBy: 'link' },
      dim: 0,
      reads: [
        'links (every) wide  stats_day  03-01T00:00Z..03-06T00:00Z',
        'links (every) wide  stats_week  03-06T00:00Z..03-27T00:00Z',
        'links (every) wide  stats_day  03-27T00:00Z..03-31T00:00Z',
      ],
    },
    {
      name: 'thousands of links: wide',
      q: MARCH,
      links: { domain: 'go.example.com' },
      f: facts({ countLinks: () => 1001 }),
      dim: 0,
      reads: [
        'links wide  stats_day  03-01T00:00Z..03-06T00:00Z',
        'links wide  stats_day  03-27T00:00Z..03-31T00:00Z',
        'links wide  stats_week  03-06T00:00Z..03-27T00:00Z',
      ],
    },
    {
      name: 'two non-geo event filters: raw events only, the whole range in one read',
      q: { ...MARCH, os: 'IOS', device: 'Mobile' },
      dim: null,
      reads: ['all  raw  03-01T00:00Z..03-31T00:00Z'],
    },
    {
      name: 'the events engine: one event dimension filtered, another grouped, of all links: pair day rows up to their limit, raw edges and tail',
      q: { start: '2025-03-01T12:00:00Z', end: '2025-03-31T00:00:00Z', device: 'Mobile', groupBy: 'country' },
      f: facts({
        rolledUp: () => ({
          hour: Date.parse('2025-03-29T05:00:00Z'),
          day: Date.parse('2025-03-29T00:00:00Z'),
          week: 0,
          pairDay: Date.parse('2025-03-29T00:00:00Z'),
        }),
      }),
      dim: 64 + 8 * 0 + 3, // country (0) × device (3)
      reads: ['all  raw  03-01T12:00Z..03-02T00:00Z', 'all  stats_pair_day  03-02T00:00Z..03-29T00:00Z', 'all  raw  03-29T00:00Z..03-31T00:00Z'],
    },
    {
      name: "the events engine before its pair rows exist (pairDay 0), or a member's scope: raw events",
      q: { ...MARCH, device: 'Mobile', groupBy: 'country' },
      f: facts({ rolledUp: () => ({ hour: Date.parse('2025-03-29T05:00:00Z'), day: Date.parse('2025-03-29T00:00:00Z'), week: 0, pairDay: 0 }) }),
      dim: null,
      reads: ['all  raw  03-01T00:00Z..03-31T00:00Z'],
    },
    {
      name: 'a filter that accepts nothing (a German visitor in Asia): no read at all',
      q: { ...MARCH, country: 'de', continent: 'Asia' },
      dim: 1,
      reads: [],
    },
    {
      name: 'a daily series in Europe/Paris: buckets at local midnight (23:00Z), so hour totals, the contiguous spans in one read',
      q: { start: '2025-03-10T00:00:00Z', end: '2025-03-12T00:00:00Z', groupBy: 'time', granularity: 'day', timezone: 'Europe/Paris' },
      dim: 0,
      reads: ['all  stats_hour  03-10T00:00Z..03-12T00:00Z'],
      bounds: ['03-09T23:00Z', '03-10T23:00Z', '03-11T23:00Z', '03-12T23:00Z'], // nominal buckets; reads clipped to the range,
    },
    {
      name: 'a series without start begins at the first click; without any click there is nothing to plan',
      q: { groupBy: 'time', granularity: 'hour', end: '2025-03-30T07:00:00Z' },
      f: facts({ firstClickHour: () => null }),
      dim: 0,
      reads: null,
    },
  ]
  for (const c of cases)
    test(c.name, () => {
      const p = plan(c.q, c.links, c.f)
      expect(readsOf(p)?.sort(bySource) ?? null).toEqual(c.reads === null ? null : [...c.reads].sort(bySource))
      if (p) expect(p.dimRead?.dim ?? null).toBe(c.dim)
      if (c.bounds) expect(p?.bounds.map(iso)).toEqual(c.bounds)
    })
})

function bySource(a: string, b: string) {
  return a < b ? -1 : a > b ? 1 : 0
}

describe('planQuery: what a query asks', () => {
  test('geo filters with a geo groupBy read one geo dim: the finest involved, components taken from the stored path', () => {
    const p = planQuery({ country: 'de', groupBy: 'city' }, NOW)
    expect(p.filters).toEqual(new Map([['country', ['DE']]]))
    expect(p.dimRead).toEqual({
      dim: 3,
      conds: [{ expr: "nullif(substr(value, 1, 2), '--')", values: ['DE'] }],
      keyExpr: "nullif(substr(value, instr(value, char(31)) + 1), '')",
    })
    expect(p.key).toBe('value')
    expect(p.groupDim?.key).toBe('city')
  })

  test('a continent becomes its countries; a second country filter narrows them', () => {
    const europe = planQuery({ continent: 'Europe' }, NOW).filters.get('country')!
    expect(europe).toContain('DE')
    expect(europe).toContain('FR')
    expect(europe).not.toContain('US')
    expect(planQuery({ continent: 'Europe', country: 'fr' }, NOW).filters).toEqual(new Map([['country', ['FR']]]))
  })

  test('a non-geo dimension alone reads its own dim; with another one, raw events', () => {
    expect(planQuery({ groupBy: 'os', os: 'IOS' }, NOW).dimRead).toEqual({ dim: 4, conds: [{ expr: 'value', values: ['IOS'] }], keyExpr: "nullif(value, '')" })
    expect(planQuery({ groupBy: 'os', country: 'DE' }, NOW).dimRead).toBeNull()
  })

  test('ranges: interval back from end, start wins, the default is every click', () => {
    expect(planQuery({ interval: '7d', end: '2025-03-08T00:00:00Z' }, NOW)).toMatchObject({
      start: Date.parse('2025-03-01T00:00:00Z'),
      end: Date.parse('2025-03-08T00:00:00Z'),
    })
    expect(planQuery({ interval: '7d', start: '2025-03-05' }, NOW)).toMatchObject({ start: Date.parse('2025-03-05T00:00:00Z'), end: NOW })
    expect(planQuery({}, NOW)).toMatchObject({ start: null, end: NOW, groupBy: 'count', perLink: null, key: 'none' })
    expect(planQuery({ groupBy: 'destination' }, NOW)).toMatchObject({ perLink: 'destination', key: 'link' })
  })

  test('bad shapes are parameter errors naming the parameter', () => {
    const error = (q: StatisticsQuery, links: LinkSet = {}) => {
      try {
        plan(q, links)
      } catch (e) {
        return e instanceof AppError ? `${e.code}: ${e.message.split(' ')[0]}` : String(e)
      }
      return 'no error'
    }
    expect(error({ groupBy: 'time' })).toBe("parameter_error: 'granularity'")
    expect(error({ timezone: 'Mars/Olympus' })).toBe("parameter_error: 'timezone'")
    expect(error({ start: '2025-03-02', end: '2025-03-01' })).toBe("parameter_error: 'start'")
    expect(error({ end: 'yesterday' })).toBe("parameter_error: 'end'")
    expect(error({ groupBy: 'time', granularity: 'hour', start: '2015-01-01', end: '2025-01-01' })).toBe("parameter_error: 'granularity'")
  })
})
