/**
 * The event types webhooks and the live stream (GET /events) carry. Adding a type is one
 * entry here: the API's enums, the OpenAPI document and the dashboard's choices follow.
 * `about: 'link'` types are narrowed by a webhook's `linkIds`/`tagIds` (contract: "Webhooks
 * and live events"). No imports: the dashboard imports this file.
 */
export const EVENT_CATALOG = {
  'link.created': { about: 'link', description: 'A link was created. `data`: the link record.' },
  'link.updated': { about: 'link', description: 'A link was changed. `data`: the link record as it is now.' },
  'link.deleted': { about: 'link', description: 'A link was deleted. `data`: the link record as it was.' },
  'link.clicked': {
    about: 'link',
    description:
      'A counted visit, scans included (one event per visit). `data`: `{ link: { id, domain, key, shortLink, destination }, click: { at, scan, continent, country, region, city, device, os, browser, referer, refererUrl, utmSource, utmMedium, utmCampaign, utmTerm, utmContent } }`.',
  },
  'link.broken': {
    about: 'link',
    description: "A link's destination checks turned it broken (contract: link health). `data`: the link record, its `health` included.",
  },
  'link.recovered': {
    about: 'link',
    description: 'A broken link passed its destination checks again. `data`: the link record, its `health` included.',
  },
  'link.test_completed': {
    about: 'link',
    description:
      "A link's A/B test was judged at its `testCompletedAt` (once, by one node): a winner promoted (its URL is now the link's; `link.updated` goes out too) or inconclusive. `data`: `{ link: <the link record>, test: <the answer of GET /links/{id}/test> }`.",
  },
  'domain.updated': {
    about: 'domain',
    description: "A custom domain's `cnameStatus` or `sslStatus` changed. `data`: the domain record. Admins only.",
  },
  'lead.created': {
    about: 'link',
    description:
      'A lead was tracked (POST /track/lead), counted for the first time. `data`: the answer of POST /track/lead, its `link` with `destination` too.',
  },
  'sale.created': {
    about: 'link',
    description:
      'A sale was tracked (POST /track/sale), counted for the first time. `data`: the answer of POST /track/sale, its `link` with `destination` too.',
  },
  'webhook.test': { about: 'webhook', description: 'Sent by `POST /webhooks/{id}/test`, to that webhook only. `data`: `{ webhookId, message }`.' },
} as const satisfies Record<string, { about: 'link' | 'domain' | 'webhook'; description: string }>

export type EventType = keyof typeof EVENT_CATALOG

export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as EventType[]

/** Whether a webhook's `linkIds`/`tagIds` narrow events of this type. */
export const isLinkEvent = (type: string): boolean => (EVENT_CATALOG as Record<string, { about: string }>)[type]?.about === 'link'
