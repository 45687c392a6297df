/**
 * GET /statistics: the query (every parameter of the contract, validated here so the
 * OpenAPI document lists them) and the response shapes, one per groupBy.
 */
import { type Static, type TLiteral, Type as t } from '@sinclair/typebox'
import { CONTINENTS } from '../geo'
import { FILTER_TYPES } from '../links'
import { BROWSER_VALUES, DEVICE_VALUES, OS_VALUES } from './click-event'
import { ConversionFields, CountResult } from './stats.results'

export { CountResult }

const literalUnion = <const V extends readonly string[]>(values: V, opts: object = {}) =>
  t.Union(values.map((v) => t.Literal(v)) as unknown as TLiteral<V[number]>[], opts)

export const GROUP_BY = [
  'count',
  'time',
  'link',
  'link_type',
  'destination',
  'country',
  'region',
  'city',
  'os',
  'browser',
  'device',
  'referer',
  'referer_url',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
] as const
export type GroupBy = (typeof GROUP_BY)[number]
export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const
export const INTERVALS = ['24h', '7d', '30d', '90d', '180d', '1y', 'all'] as const
export type Interval = (typeof INTERVALS)[number]

const Str = (min: number, max: number, description: string) => t.Optional(t.String({ minLength: min, maxLength: max, description }))
const Ids = (max: number, description: string) => t.Optional(t.Array(t.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: max, description }))
const Utm = (name: string) => Str(1, 190, `Only visits whose landing URL carried ${name} with exactly this value (1-190).`)

export const StatisticsQuery = t.Object({
  groupBy: t.Optional(
    literalUnion(GROUP_BY, {
      default: 'count',
      description: 'count → { clicks, scans }; time → [{ start, clicks, scans }]; any other → [{ <key>, clicks, scans }] by clicks descending.',
    }),
  ),
  granularity: t.Optional(literalUnion(GRANULARITIES, { description: 'Bucket size; required when groupBy is time. Weeks start on Monday.' })),
  timezone: Str(1, 64, 'IANA zone of the time buckets (default UTC); buckets start at local boundaries, DST-correct.'),
  start: Str(10, 40, 'ISO 8601 UTC timestamp (e.g. 2025-01-31T00:00:00Z), inclusive; takes precedence over interval.'),
  end: Str(10, 40, 'ISO 8601 UTC timestamp, exclusive; defaults to now; takes precedence over interval.'),
  interval: t.Optional(
    literalUnion(INTERVALS, {
      default: 'all',
      description: 'Range ending at end (default all: every click). Ignored for the side given by start.',
    }),
  ),
  linkId: Str(1, 100, "One link (the caller's own unless admin)."),
  linkIds: Ids(100, 'Links (repeated, 1-100); combined with linkId.'),
  domain: Str(1, 200, 'Links on this short domain.'),
  url: Str(1, 2500, 'A full short link (https://domain/key); takes precedence over domain.'),
  linkType: t.Optional(literalUnion(FILTER_TYPES, { description: `One of the ${FILTER_TYPES.length} link-type filter values.` })),
  tagNames: t.Optional(
    t.Array(t.String({ minLength: 1, maxLength: 50 }), {
      minItems: 1,
      maxItems: 50,
      description: 'Links carrying any tag with one of these names (repeated, case-insensitive).',
    }),
  ),
  tagIds: Ids(50, 'Links carrying any of these tags (repeated, 1-50); takes precedence over tagNames.'),
  qr: t.Optional(t.Boolean({ description: 'true: QR scans only; false: clicks that are not scans.' })),
  conversions: t.Optional(
    t.Boolean({
      description:
        "true: every row also carries `leads`, `sales` and `saleAmount` (currency → sum of amounts in minor units, `{}` when none; no exchange rates). A lead or sale counts at its own time and carries its click's link and dimensions for every filter and group.",
    }),
  ),
  continent: t.Optional(literalUnion(CONTINENTS as unknown as readonly string[], { description: 'Continent of the visitor (from the country).' })),
  country: t.Optional(t.String({ pattern: '^[A-Za-z]{2}$', description: "ISO 3166-1 alpha-2 code of the visitor's country." })),
  region: Str(1, 200, 'Region (state, province) name exactly as grouped.'),
  city: Str(1, 200, 'City name exactly as grouped.'),
  device: t.Optional(literalUnion(DEVICE_VALUES)),
  browser: t.Optional(literalUnion(BROWSER_VALUES)),
  os: t.Optional(literalUnion(OS_VALUES)),
  referer: Str(1, 253, 'Referring host (e.g. www.google.com).'),
  refererUrl: Str(1, 2000, 'Full referring URL.'),
  destination: Str(1, 200, 'Links whose destination is exactly this URL.'),
  utmSource: Utm('utm_source'),
  utmMedium: Utm('utm_medium'),
  utmCampaign: Utm('utm_campaign'),
  utmTerm: Utm('utm_term'),
  utmContent: Utm('utm_content'),
})
export type StatisticsQuery = Static<typeof StatisticsQuery>

export const TimeRow = t.Object({ start: t.String({ format: 'date-time' }), clicks: t.Integer(), scans: t.Integer(), ...ConversionFields })
/** linkId (+ shortLink, destination), linkType, destination, country, … with clicks and scans. */
export const GroupRow = t.Object(
  { clicks: t.Integer(), scans: t.Integer(), ...ConversionFields },
  {
    additionalProperties: true,
    description:
      'The groupBy key (linkId with shortLink and destination, linkType, destination, country, region, city, os, browser, device, referer, refererUrl, utmSource, utmMedium, utmCampaign, utmTerm, utmContent; null = unknown or none), clicks and scans.',
  },
)
export const StatisticsResult = t.Union([CountResult, t.Array(TimeRow), t.Array(GroupRow)])

/** GET /statistics/events: the same filters and scope, no groupBy; the file format. */
export const EventsExportQuery = t.Composite([
  t.Omit(StatisticsQuery, ['groupBy', 'granularity', 'timezone', 'conversions']),
  t.Object({
    event: t.Optional(
      t.Union([t.Literal('clicks'), t.Literal('leads'), t.Literal('sales')], {
        default: 'clicks',
        description:
          "clicks (default): the visits. leads, sales: the conversions, each with its click's fields plus clickId, eventName, customerExternalId and, for sales, amount, currency and invoiceId; `count` is a lead's eventQuantity (1 for a sale).",
      }),
    ),
    format: t.Optional(
      t.Union([t.Literal('csv'), t.Literal('ndjson'), t.Literal('parquet')], {
        default: 'csv',
        description: 'csv (a header row), ndjson (one JSON object a line) or parquet.',
      }),
    ),
    variant: t.Optional(
      t.Boolean({
        default: false,
        description:
          "true: a last field `variant`, the A/B test variant of the visit (of a lead's or sale's click): its index in the link's testVariants, null outside a test. Beyond the contract's fields, so only when asked for.",
      }),
    ),
  }),
])
export type EventsExportQuery = Static<typeof EventsExportQuery>
