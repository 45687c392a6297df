/**
 * The export formats imports read, one per source, each as the product writes it (where each
 * was learned is in docs/imports.md). A source reads CSV (columns found by header name), JSON
 * (the link objects at a path), or both; either way a link becomes a `RawLink`, which
 * imports.rows.ts checks and normalises the same way for every source.
 */

export const IMPORT_SOURCES = ['csv', 'bitly', 'shlink', 'yourls', 'kutt', 'rebrandly'] as const
export type ImportSourceName = (typeof IMPORT_SOURCES)[number]

/** What each source reads, as the dashboard and the API document say it. */
export const SOURCE_HELP: Record<ImportSourceName, { label: string; file: string }> = {
  csv: {
    label: 'CSV (this dashboard)',
    file: 'CSV with the columns url (required), key, domain, tags (names separated by ;), comment, type (link or google-form)',
  },
  bitly: { label: 'Bitly', file: "Bitly's CSV export of links, or the JSON of the API's GET /v4/groups/{group}/bitlinks" },
  shlink: { label: 'Shlink', file: "the web client's short_urls.csv export, or the JSON of the REST API's GET /rest/v3/short-urls" },
  yourls: { label: 'YOURLS', file: 'a CSV of the yourls_url table (keyword, url, title, timestamp, ip, clicks), or the JSON of yourls-api.php?action=stats' },
  kutt: { label: 'Kutt', file: "the JSON of Kutt's API GET /api/v2/links" },
  rebrandly: { label: 'Rebrandly', file: "the JSON of Rebrandly's API GET /v1/links, or a CSV export of links" },
}

/** One link as an export states it, before any check. Values are as found (JSON may hold any type). */
export interface RawLink {
  url?: unknown
  key?: unknown
  domain?: unknown
  /** A short link (`https://bit.ly/abc` or `bit.ly/abc`): its host and path give domain and key when those are absent. */
  shortUrl?: unknown
  title?: unknown
  comment?: unknown
  tags?: unknown
  createdAt?: unknown
  clicks?: unknown
  type?: unknown
}

export type RawField = keyof RawLink

export interface CsvFormat {
  /** Header names per field, compared lower-case without spaces, `_` and `-`; the first column found wins. */
  columns: Partial<Record<RawField, string[]>>
  /** What separates tag names in one cell. */
  tagSeparator: RegExp
  /** What a user should see when the header has no destination column. */
  expected: string
}

export interface JsonFormat {
  /** Where the link objects are when the file is a JSON object (JSONPath as @streamparser/json reads it); a top-level array holds them itself. */
  objectPaths: string[]
  map(o: Record<string, unknown>): RawLink
  expected: string
}

export interface SourceFormat {
  label: string
  csv?: CsvFormat
  json?: JsonFormat
  /** Whether a row's own domain is the user's (our CSV) rather than the other service's. */
  ownDomains: boolean
}

/** A header cell as `columns` lists it. */
export const headerName = (cell: string) =>
  cell
    .trim()
    .toLowerCase()
    .replace(/[\s_-]/g, '')

const get = (o: Record<string, unknown>, ...path: string[]): unknown => {
  let v: unknown = o
  for (const p of path) v = v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[p] : undefined
  return v
}

/** Tag lists in JSON: names, or objects naming them (Rebrandly's tag references). */
const tagNames = (v: unknown): unknown => (Array.isArray(v) ? v.map((t) => (t && typeof t === 'object' ? ((t as Record<string, unknown>).name ?? '') : t)) : v)

export const SOURCES: Record<ImportSourceName, SourceFormat> = {
  csv: {
    label: "this dashboard's CSV",
    ownDomains: true,
    csv: {
      columns: {
        url: ['url', 'destination'],
        key: ['key', 'slug'],
        domain: ['domain'],
        tags: ['tags', 'tag'],
        comment: ['comment', 'comments'],
        type: ['type', 'linktype'],
      },
      tagSeparator: /;/,
      expected: 'url (required), key, domain, tags (names separated by ;), comment, type',
    },
  },
  bitly: {
    label: 'Bitly',
    ownDomains: false,
    csv: {
      columns: {
        url: ['longurl', 'destination', 'destinationurl', 'originalurl'],
        // A custom bitlink (a full short link, as in the API's custom_bitlinks) is the address people know; else the bitlink.
        shortUrl: ['custombitlink', 'custombitlinks', 'bitlink', 'link', 'shortlink', 'shorturl', 'id'],
        title: ['title', 'linktitle'],
        tags: ['tags'],
        createdAt: ['createdat', 'created', 'datecreated', 'creationdate'],
        clicks: ['clicks', 'totalclicks', 'engagements', 'totalengagements'],
      },
      tagSeparator: /[;,|]/,
      expected: 'long_url (required), bitlink or link, custom bitlink, title, tags, created_at, clicks',
    },
    json: {
      // GET /v4/groups/{group_guid}/bitlinks: { links: [...], pagination }
      objectPaths: ['$.links.*'],
      map: (o) => {
        const custom = get(o, 'custom_bitlinks')
        return {
          url: o.long_url,
          shortUrl: (Array.isArray(custom) ? custom[0] : undefined) ?? o.link ?? o.id,
          title: o.title,
          tags: o.tags,
          createdAt: o.created_at,
          clicks: o.clicks ?? o.total_clicks,
        }
      },
      expected: 'a page of GET /v4/groups/{group}/bitlinks ({ "links": [...] }) or an array of bitlinks',
    },
  },
  shlink: {
    label: 'Shlink',
    ownDomains: false,
    csv: {
      // The web client's "Export" (short_urls.csv): createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits; tags joined with |.
      columns: {
        url: ['longurl'],
        key: ['shortcode'],
        domain: ['domain'],
        shortUrl: ['shorturl'],
        title: ['title'],
        tags: ['tags'],
        createdAt: ['createdat', 'datecreated'],
        clicks: ['visits', 'visitscount'],
      },
      tagSeparator: /\|/,
      expected: 'createdAt, domain, shortCode, shortUrl, longUrl (required), title, tags, visits',
    },
    json: {
      // GET /rest/v3/short-urls: { shortUrls: { data: [...], pagination } }
      objectPaths: ['$.shortUrls.data.*', '$.data.*'],
      map: (o) => ({
        url: o.longUrl,
        key: o.shortCode,
        domain: o.domain,
        shortUrl: o.shortUrl,
        title: o.title,
        tags: o.tags,
        createdAt: o.dateCreated,
        clicks: get(o, 'visitsSummary', 'total') ?? o.visitsCount,
      }),
      expected: 'a page of GET /rest/v3/short-urls ({ "shortUrls": { "data": [...] } }) or an array of short URLs',
    },
  },
  yourls: {
    label: 'YOURLS',
    ownDomains: false,
    csv: {
      // The yourls_url table's columns, as YOURLS' export plugins and database exports write them.
      columns: {
        url: ['url', 'longurl'],
        key: ['keyword'],
        shortUrl: ['shorturl'],
        title: ['title'],
        createdAt: ['timestamp'],
        clicks: ['clicks'],
      },
      tagSeparator: /;/,
      expected: 'keyword, url (required), title, timestamp, ip, clicks',
    },
    json: {
      // yourls-api.php?action=stats&filter=last&format=json: { links: { link_1: {...}, ... }, stats }
      objectPaths: ['$.links.*'],
      map: (o) => ({ url: o.url, key: o.keyword, shortUrl: o.shorturl, title: o.title, createdAt: o.timestamp, clicks: o.clicks }),
      expected: 'the answer of yourls-api.php?action=stats ({ "links": { "link_1": {...} } }) or an array of links',
    },
  },
  kutt: {
    label: 'Kutt',
    ownDomains: false,
    json: {
      // GET /api/v2/links: { total, limit, skip, data: [...] }
      objectPaths: ['$.data.*'],
      map: (o) => ({
        url: o.target,
        key: o.address,
        domain: o.domain,
        shortUrl: o.link,
        comment: o.description,
        createdAt: o.created_at,
        clicks: o.visit_count,
      }),
      expected: 'a page of GET /api/v2/links ({ "data": [...] }) or an array of links',
    },
  },
  rebrandly: {
    label: 'Rebrandly',
    ownDomains: false,
    csv: {
      columns: {
        url: ['destination', 'destinationurl', 'longurl'],
        key: ['slashtag'],
        shortUrl: ['shorturl', 'shortlink'],
        domain: ['domain', 'domainname'],
        title: ['title'],
        comment: ['description', 'notes'],
        tags: ['tags'],
        createdAt: ['createdat', 'created', 'creationdate'],
        clicks: ['clicks'],
      },
      tagSeparator: /[;,|]/,
      expected: 'destination (required), slashtag, shortUrl, domain, title, tags, createdAt, clicks',
    },
    json: {
      // GET /v1/links: an array of links.
      objectPaths: ['$.links.*', '$.data.*'],
      map: (o) => ({
        url: o.destination,
        key: o.slashtag,
        domain: get(o, 'domain', 'fullName'),
        shortUrl: o.shortUrl,
        title: o.title,
        comment: o.description,
        tags: tagNames(o.tags),
        createdAt: o.createdAt,
        clicks: o.clicks,
      }),
      expected: 'the answer of GET /v1/links (an array of links)',
    },
  },
}
