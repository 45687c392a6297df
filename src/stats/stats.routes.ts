import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { parseQuery, queryParameters } from '../shared'
import { CONTENT_TYPES } from './events.export'
import { EventsExportQuery, StatisticsQuery, StatisticsResult } from './stats.schema'
import type { StatsService } from './stats.service'

const errors = errorResponses(400, 401, 403, 422, 429)

export function statsRoutes({ stats }: { stats: StatsService }) {
  return new Elysia({ name: 'stats', normalize: false })
    .get(
      '/statistics/events',
      async ({ request }) => {
        const { stream, format } = await stats.exportEvents(callerOf(request), parseQuery(EventsExportQuery, new URL(request.url).searchParams))
        return new Response(stream, {
          headers: { 'content-type': CONTENT_TYPES[format], 'content-disposition': `attachment; filename="events.${format}"`, 'cache-control': 'no-store' },
        })
      },
      {
        response: errors,
        detail: {
          tags: ['Statistics'],
          summary: 'Export the raw click events',
          description: [
            'The visits behind the statistics, one row per recorded visit (merged identical visits carry `count`), oldest first,',
            'with the same filters, range (`start`/`end`/`interval`, default all) and scope rules as GET /statistics (members: their own links), no groupBy.',
            '`format`: `csv` (default, a header row), `ndjson` (one JSON object a line) or `parquet`. Fields: at (ISO 8601 UTC; a timestamp in Parquet),',
            'linkId, domain, key (the link as it is now), scan, count, continent, country, region, city, os, browser, device, referer, refererUrl,',
            'utmSource, utmMedium, utmCampaign, utmTerm, utmContent. The answer streams in bounded memory, millions of rows included.',
            "`event=leads` or `event=sales`: the conversions instead (POST /track/lead, /track/sale), each with its click's fields (at is the",
            "conversion's own time) plus clickId, eventName, customerExternalId and, for sales, amount, currency and invoiceId.",
            "`variant=true` appends `variant`: the A/B test variant of the visit (for a lead or sale, of its click), its index in the link's",
            'testVariants, null outside a test.',
          ].join(' '),
          parameters: queryParameters(EventsExportQuery),
          responses: {
            200: {
              description: 'The events file.',
              content: {
                'text/csv': { schema: { type: 'string' } },
                'application/x-ndjson': { schema: { type: 'string' } },
                'application/vnd.apache.parquet': { schema: { type: 'string', format: 'binary' } },
              },
            },
          },
        },
      },
    )
    .get('/statistics', ({ request }) => stats.statistics(callerOf(request), parseQuery(StatisticsQuery, new URL(request.url).searchParams)), {
      response: { 200: StatisticsResult, ...errors },
      detail: {
        tags: ['Statistics'],
        summary: 'Retrieve statistics',
        description: [
          "Clicks and scans of the caller's links (admins: every link), bots excluded; a click is visible within 2 seconds.",
          '`groupBy=count` → `{ clicks, scans }` (clicks counts every visit, scans included). `groupBy=time` (needs `granularity`) →',
          '`[{ start, clicks, scans }]` ascending, one bucket per local hour/day/week (Monday)/month of `timezone`, empty buckets included,',
          "first and last buckets clipped to the range so the buckets add up to the count; `start` is the bucket's local start as a UTC instant.",
          'Any other groupBy → `[{ <key>, clicks, scans }]` by clicks descending; keys: linkId (with shortLink and destination), linkType,',
          'destination, country, region, city, os, browser, device, referer, refererUrl, utmSource … utmContent. A null key means unknown',
          'or none (referer null: a direct visit). The range is [start, end); end defaults to now; without start, `interval` (default all).',
          '`qr=true` counts scans only, `qr=false` clicks that are not scans. Clicks of links deleted later still count.',
          "A member naming another user's link (linkId, linkIds, url) or tag gets 403.",
          '`conversions=true` adds `leads`, `sales` and `saleAmount` (currency → sum of amounts in minor units) to every row of every groupBy:',
          "a lead or sale counts at its own time and carries its click's link and dimensions for every filter and group.",
        ].join(' '),
        parameters: queryParameters(StatisticsQuery),
      },
    })
}
