/**
 * Link schemas: the 16 create types and their `data` variants (contract's table),
 * `linkOptions`, bodies, the record, and the list/count queries. The same schemas
 * validate requests and write the OpenAPI document.
 */
import { type Static, type TLiteral, type TSchema, type TUnion, Type as t } from '@sinclair/typebox'
import { Gs1Data } from '../gs1'
import { FILE_ID_PATTERN, PlainText, pagingQuery, sortOrderQuery } from '../shared'
import { TEST_GOALS, TEST_PERCENTAGE_MAX, TEST_PERCENTAGE_MIN, TEST_VARIANTS_MAX, TEST_VARIANTS_MIN } from './links.ab.values'
import { HealthFilter, LinkHealthSchema } from './links.health'

export const CREATE_TYPES = [
  'link',
  'document',
  'file',
  'google-form',
  'menu',
  'app-stores',
  'image',
  'audio',
  'video',
  'wi-fi',
  'email',
  'map',
  'whatsapp',
  'text',
  'sms',
  'svg',
  'gs1',
] as const
export type LinkType = (typeof CREATE_TYPES)[number]
/** The longest link key: longer short-link paths can never name a link. */
export const MAX_KEY_LENGTH = 190
/** The shortest link password (a 1-character one falls to a handful of guesses). */
export const MIN_PASSWORD_LENGTH = 6
/** Filter values: the create types plus kinds other services have (they match nothing here). */
export const FILTER_TYPES = [
  'link',
  'document',
  'file',
  'vcard',
  'landing-page',
  'google-form',
  'menu',
  'app-stores',
  'image',
  'audio',
  'video',
  'wi-fi',
  'email',
  'map',
  'whatsapp',
  'text',
  'sms',
  'svg',
  'code',
  'gs1',
] as const
/** Types whose visitors land on a page this service hosts. */
export const HOSTED_TYPES: ReadonlySet<string> = new Set(['document', 'file', 'image', 'audio', 'video', 'svg', 'menu', 'text', 'wi-fi', 'app-stores'])

/** One TLiteral per value: Elysia reads a union's members as a tuple (a TLiteral<'a' | 'b'>[] would infer as `never`). */
type LiteralsOf<V extends readonly string[]> = { -readonly [K in keyof V]: TLiteral<V[K]> }
export const literalUnion = <const V extends readonly string[]>(values: V, opts: object = {}): TUnion<LiteralsOf<V>> =>
  t.Union(
    values.map((v) => t.Literal(v)),
    opts,
  ) as unknown as TUnion<LiteralsOf<V>>
export const LinkTypeParam = literalUnion(CREATE_TYPES, { description: `One of the ${CREATE_TYPES.length} create types.` })
export const LinkTypeFilter = literalUnion(FILTER_TYPES, { description: `One of the ${FILTER_TYPES.length} link-type filter values.` })

const Url = (description: string, min = 1) =>
  t.String({ minLength: min, maxLength: 2000, format: 'uri', description: `${description} http or https, ${min}-2000 characters.` })
const strict = { additionalProperties: false } as const
const FileId = t.String({ minLength: 1, maxLength: 100, pattern: FILE_ID_PATTERN, description: 'An uploaded file (POST /files).' })
const Title = t.String({ minLength: 1, maxLength: 200, description: 'Page title, 1-200.' })

/** `data` per create type; the `{type}` path segment picks the variant. */
export const DATA_BY_TYPE: Record<LinkType, TSchema> = {
  link: t.Object({ url: Url('Destination URL.') }, strict),
  'google-form': t.Object({ url: Url('URL of the Google Form.') }, strict),
  document: fileData('PDF or other document'),
  file: fileData('any downloadable file'),
  image: fileData('image'),
  audio: fileData('audio'),
  video: fileData('video'),
  svg: fileData('SVG image'),
  menu: t.Object(
    {
      fileId: t.Optional(FileId),
      url: t.Optional(Url('Menu document URL.')),
      title: t.Optional(Title),
      sections: t.Optional(
        t.Array(
          t.Object(
            {
              name: t.String({ minLength: 1, maxLength: 100 }),
              items: t.Array(
                t.Object(
                  {
                    name: t.String({ minLength: 1, maxLength: 100 }),
                    price: t.Optional(t.String({ minLength: 1, maxLength: 30, description: 'As displayed, e.g. "€4.50".' })),
                    description: t.Optional(t.String({ maxLength: 500 })),
                  },
                  strict,
                ),
                { maxItems: 200 },
              ),
            },
            strict,
          ),
          { minItems: 1, maxItems: 50 },
        ),
      ),
    },
    { ...strict, description: 'One of fileId, url or sections.' },
  ),
  'app-stores': t.Object(
    {
      ios: t.Optional(Url('App Store URL.')),
      android: t.Optional(Url('Google Play URL.')),
      fallbackUrl: t.Optional(Url('Where other visitors may go.')),
      title: t.Optional(Title),
    },
    { ...strict, description: 'At least one of ios and android.' },
  ),
  'wi-fi': t.Object(
    {
      ssid: t.String({ minLength: 1, maxLength: 32, description: 'Network name, 1-32.' }),
      password: t.Optional(t.String({ maxLength: 63, description: 'Network password, 0-63 (8-63 for WPA, 5/13/16/29 for WEP).' })),
      encryption: t.Optional(literalUnion(['WPA', 'WEP', 'nopass'], { default: 'WPA' })),
      hidden: t.Optional(t.Boolean({ default: false })),
    },
    strict,
  ),
  email: t.Object(
    {
      to: t.String({ minLength: 3, maxLength: 254, format: 'email' }),
      subject: t.Optional(t.String({ maxLength: 500 })),
      body: t.Optional(t.String({ maxLength: 1500 })),
    },
    strict,
  ),
  sms: t.Object({ phone: phone(), message: t.Optional(t.String({ maxLength: 1000 })) }, strict),
  whatsapp: t.Object({ phone: phone(), message: t.Optional(t.String({ maxLength: 1000 })) }, strict),
  map: t.Object(
    {
      query: t.Optional(t.String({ minLength: 1, maxLength: 500, description: 'Place or address.' })),
      latitude: t.Optional(t.Number({ minimum: -90, maximum: 90 })),
      longitude: t.Optional(t.Number({ minimum: -180, maximum: 180 })),
    },
    { ...strict, description: 'query, or latitude and longitude.' },
  ),
  text: t.Object({ text: t.String({ minLength: 1, maxLength: 5000 }), title: t.Optional(Title) }, strict),
  gs1: Gs1Data,
}

function fileData(what: string) {
  return t.Object(
    { fileId: t.Optional(FileId), url: t.Optional(Url(`URL of the ${what}.`)), title: t.Optional(Title) },
    { ...strict, description: `The ${what}: fileId (uploaded) or url.` },
  )
}
function phone() {
  return t.String({
    minLength: 3,
    maxLength: 32,
    pattern: '^\\+?[0-9 ()./-]{3,32}$',
    description: 'Phone number, international format preferred (+33 6 12 34 56 78).',
  })
}

export const LinkData = t.Union(Object.values(DATA_BY_TYPE), { description: 'Content; the variant follows the {type} path segment.' })

export const Expiration = t.Object(
  {
    time: t.String({ format: 'date-time', description: 'ISO 8601 time at which the link expires; in the future when set.' }),
    url: Url('Where visitors go after expiry.', 3),
  },
  strict,
)
const UtmValue = t.Optional(t.String({ minLength: 1, maxLength: 190 }))
export const Utm = t.Object(
  { source: UtmValue, medium: UtmValue, campaign: UtmValue, term: UtmValue, content: UtmValue, ref: UtmValue },
  { ...strict, description: 'Each value fills or overrides utm_<name> (and `ref`) in the destination query.' },
)
export const ContentOption = t.Object(
  {
    isWaterMark: t.Optional(t.Boolean({ default: false })),
    watermarkText: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
    isScreenshotProtected: t.Optional(
      t.Boolean({ default: false, description: 'Applies the deterrents a web page can apply; a web page cannot fully prevent screenshots.' }),
    ),
  },
  strict,
)
export const PreviewData = t.Object(
  {
    title: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
    desc: t.Optional(t.String({ minLength: 1, maxLength: 256 })),
    image: t.Optional(Url('og:image.')),
  },
  strict,
)

const TargetUrl = Url('Redirect URL for matching visitors.')
const TargetList = <T extends TSchema>(item: T) => t.Array(item, { minItems: 1, maxItems: 50 })
export const DeviceTargets = t.Object({ ios: TargetUrl, android: TargetUrl }, strict)
export const LocationTarget = t.Object(
  {
    country: t.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2.' }),
    region: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
    city: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
    url: TargetUrl,
  },
  strict,
)
export const LanguageTarget = t.Object(
  {
    language: t.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$', description: 'BCP 47 tag matched against Accept-Language, e.g. fr or pt-BR.' }),
    url: TargetUrl,
  },
  strict,
)
export const TimeTarget = t.Object(
  {
    start: t.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, inclusive.' }),
    end: t.String({ pattern: '^([01][0-9]|2[0-4]):[0-5][0-9]$', description: 'HH:MM, exclusive; a window past midnight wraps (22:00-02:00).' }),
    days: t.Optional(
      t.Array(t.Integer({ minimum: 1, maximum: 7 }), {
        minItems: 1,
        maxItems: 7,
        uniqueItems: true,
        description: 'ISO weekdays, 1 = Monday … 7 = Sunday; all days when absent.',
      }),
    ),
    timezone: t.Optional(t.String({ minLength: 1, maxLength: 64, default: 'UTC', description: 'IANA time zone.' })),
    url: TargetUrl,
  },
  strict,
)
export const NumberTarget = t.Object(
  { from: t.Integer({ minimum: 1 }), to: t.Integer({ minimum: 1 }), url: TargetUrl },
  { ...strict, description: 'The n-th visit of the link goes to url when from ≤ n ≤ to.' },
)
const targeting = <D extends TSchema>(targetDatas: D) =>
  t.Object({ targetType: literalUnion(['device', 'location', 'number', 'time', 'language']), targetDatas }, strict)
export const Targeting = targeting(
  t.Union([DeviceTargets, TargetList(LocationTarget), TargetList(NumberTarget), TargetList(TimeTarget), TargetList(LanguageTarget)], {
    description: 'device: { ios, android }; location/number/time/language: arrays of their items. First matching item wins.',
  }),
)
/** For validation: items are checked against `targetType` by the service, which names the failing item. */
const CheckedTargeting = targeting(t.Union([t.Record(t.String(), t.Unknown()), t.Array(t.Unknown(), { minItems: 1, maxItems: 50 })]))
export const TARGET_ITEM_SCHEMA = { location: LocationTarget, number: NumberTarget, time: TimeTarget, language: LanguageTarget } as const

const nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()])

export const TestVariant = t.Object(
  {
    url: Url('A destination of the A/B test (http or https).'),
    percentage: t.Integer({
      minimum: TEST_PERCENTAGE_MIN,
      maximum: TEST_PERCENTAGE_MAX,
      description: `Share of the split visits, ${TEST_PERCENTAGE_MIN}-${TEST_PERCENTAGE_MAX}.`,
    }),
  },
  strict,
)
export const TestVariants = t.Array(TestVariant, {
  minItems: TEST_VARIANTS_MIN,
  maxItems: TEST_VARIANTS_MAX,
  description: `A/B test: ${TEST_VARIANTS_MIN}-${TEST_VARIANTS_MAX} destinations whose percentages sum to 100 (types link, google-form, gs1; needs trackConversion). A counted visit no targeting item catches goes to one drawn by percentage until testCompletedAt; a cookie keeps a visitor on theirs. null removes the test without a verdict.`,
})

const linkOptions = <G extends TSchema>(targetingSchema: G) =>
  t.Object(
    {
      domain: t.Optional(
        t.String({ minLength: 3, maxLength: 253, description: 'A default short domain or a configured custom domain; the first default when absent.' }),
      ),
      key: t.Optional(
        t.String({
          minLength: 1,
          maxLength: MAX_KEY_LENGTH,
          pattern: '^[a-zA-Z0-9_-]+$',
          description: `Slug, 1-${MAX_KEY_LENGTH}; a random 7-character slug when absent. Unique per domain.`,
        }),
      ),
      tags: t.Optional(
        nullable(t.Array(t.String({ minLength: 1, maxLength: 100 }), { maxItems: 30, uniqueItems: true, description: 'Tag ids of the owner, 0-30, unique.' })),
      ),
      comment: t.Optional(nullable(t.String({ maxLength: 2000, description: 'Returned as `comments`.' }))),
      password: t.Optional(
        nullable(
          t.String({
            minLength: MIN_PASSWORD_LENGTH,
            maxLength: 128,
            description: `Visitors must enter it; ${MIN_PASSWORD_LENGTH}-128 characters; stored hashed, never returned. null removes it. Wrong guesses are limited to 10 per client IP (IPv6: per /64) and link, and 100 per link from all IPs, per 15 minutes; then 429 with Retry-After. Visitors holding the one-hour cookie of a correct password are never limited.`,
          }),
        ),
      ),
      expiration: t.Optional(nullable(Expiration)),
      utm: t.Optional(nullable(Utm)),
      option: t.Optional(nullable(ContentOption)),
      previewData: t.Optional(nullable(PreviewData)),
      Targeting: t.Optional(nullable(targetingSchema)),
      trackConversion: t.Optional(
        nullable(
          t.Boolean({
            description:
              'Conversion tracking (types link, google-form, gs1): each counted visit gets a click id, appended to the redirect as the query parameter `sl_id`, which the site passes back to POST /track/lead and /track/sale. Default false; null is false.',
          }),
        ),
      ),
      archived: t.Optional(t.Boolean()),
      testVariants: t.Optional(nullable(TestVariants)),
      testCompletedAt: t.Optional(
        nullable(
          t.String({
            format: 'date-time',
            description:
              'When the A/B test is judged (within 5 seconds, one node in a cluster); required with testVariants, in the future when set, at most a year ahead. Setting it to now ends the test early.',
          }),
        ),
      ),
      testGoal: t.Optional(nullable(literalUnion(TEST_GOALS, { description: 'What the A/B test counts as a conversion: leads (default) or sales.' }))),
      healthFallbackUrl: t.Optional(
        nullable(
          Url(
            'Where a visit goes instead when the URL it resolves to (destination or targeting URL) is broken (see `health`); the visit still counts. Types with health only (link, google-form, gs1).',
          ),
        ),
      ),
    },
    { ...strict, description: 'On update, an absent field is unchanged and null clears it.' },
  )
export const LinkOptions = linkOptions(Targeting)
const CheckedLinkOptions = linkOptions(CheckedTargeting)
export type LinkOptions = Static<typeof LinkOptions>

/** Styling of the QR image; the QR module refines and checks it. */
export const QrOptionsBody = t.Record(t.String(), t.Unknown(), { description: 'QR design; see the QR section.' })

/**
 * Bodies are built twice from one definition: with `data` as the union of variants for
 * the OpenAPI document, and with `data` left open for validation, because the `{type}`
 * path segment (or the link's type) picks the variant and gives precise errors.
 */
const linkBody = <D extends TSchema, O extends TSchema>(data: D, options: O) => ({
  create: t.Object({ data, linkOptions: t.Optional(nullable(options)), qrOptions: t.Optional(nullable(QrOptionsBody)) }, strict),
  update: t.Object({ data: t.Optional(data), linkOptions: t.Optional(nullable(options)), qrOptions: t.Optional(nullable(QrOptionsBody)) }, strict),
})
const bulkBody = <U extends TSchema>(updateData: U) =>
  t.Object(
    { linkIds: t.Array(t.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 100, uniqueItems: true }), updateData },
    { ...strict, description: 'All-or-nothing. `updateData.data` needs every link to share one linkType; `linkOptions.key` cannot be set in bulk.' },
  )
const documented = linkBody(LinkData, LinkOptions)
const checked = linkBody(t.Unknown(), CheckedLinkOptions)
export const CreateLinkBody = documented.create
export const UpdateLinkBody = documented.update
export const BulkUpdateBody = bulkBody(UpdateLinkBody)
export const CreateLinkInput = checked.create
export const UpdateLinkInput = checked.update
export const BulkUpdateInput = bulkBody(UpdateLinkInput)

export const LinkRecord = t.Object({
  id: t.String({ description: 'lnk_…' }),
  domain: t.String(),
  key: t.String(),
  shortLink: t.String(),
  qrCode: t.String({ description: '{baseUrl}/qr/<id>' }),
  linkType: t.String(),
  destination: t.String({ description: 'Redirect URL, hosted page URL, or the mailto:/sms:/wa.me/maps URL the type implies.' }),
  clicks: t.Number(),
  importedClicks: t.Integer({
    minimum: 0,
    description:
      'Clicks another service counted before the link was imported (POST /imports); 0 otherwise. Never part of `clicks`, statistics or number targeting.',
  }),
  hasPassword: t.Boolean(),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
  lastClicked: nullable(t.String({ format: 'date-time' })),
  tags: t.Array(t.String()),
  comments: nullable(t.String()),
  expiration: nullable(Expiration),
  utm: nullable(Utm),
  option: nullable(ContentOption),
  previewData: nullable(PreviewData),
  Targeting: nullable(Targeting),
  trackConversion: t.Boolean({ description: 'Counted visits carry a click id (`sl_id`) for POST /track/lead and /track/sale.' }),
  userId: t.String(),
  archived: t.Boolean(),
  data: t.Unknown({ description: 'The content as sent.' }),
  qrOptions: nullable(t.Unknown()),
  testVariants: nullable(TestVariants),
  testCompletedAt: nullable(t.String({ format: 'date-time', description: 'linkOptions.testCompletedAt.' })),
  testGoal: nullable(literalUnion(TEST_GOALS, { description: 'linkOptions.testGoal (leads when a test is set without one).' })),
  healthFallbackUrl: nullable(t.String({ description: 'linkOptions.healthFallbackUrl.' })),
  health: nullable(LinkHealthSchema),
})

const ArrayOf = <T extends TSchema>(item: T, min: number, max: number, description: string) => t.Array(item, { minItems: min, maxItems: max, description })
const linkFilters = (searchMax: number) => ({
  domain: t.Optional(t.String({ minLength: 1, maxLength: 253 })),
  linkType: t.Optional(LinkTypeFilter),
  tagIds: t.Optional(ArrayOf(t.String({ minLength: 1 }), 1, 50, 'Links carrying any of these tags (repeated, 1-50).')),
  search: t.Optional(PlainText({ minLength: 1, maxLength: searchMax, description: 'Case-insensitive match in the slug, the destination and the content.' })),
  userIds: t.Optional(ArrayOf(t.String({ minLength: 1 }), 1, 100, 'Owners (repeated, 1-100); members may name only themselves.')),
  includeArchived: t.Optional(t.Boolean({ default: false })),
  ids: t.Optional(ArrayOf(t.String({ minLength: 1 }), 1, 100, 'Link ids (repeated).')),
  shortLinks: t.Optional(ArrayOf(t.String({ minLength: 1, maxLength: 2500 }), 1, 100, 'Full short links (repeated).')),
  health: t.Optional(HealthFilter),
})

export const ListLinksQuery = t.Object({
  ...linkFilters(200),
  sortBy: t.Optional(
    literalUnion(['created_at', 'clicks', 'last_created_at'], {
      default: 'created_at',
      description: 'last_created_at = time of the last click; never-clicked links last.',
    }),
  ),
  sortOrder: sortOrderQuery(),
  ...pagingQuery(100),
})
export type ListLinksQuery = Static<typeof ListLinksQuery>
export const CountLinksQuery = t.Object({ ...linkFilters(200) })
export type CountLinksQuery = Static<typeof CountLinksQuery>

export const BulkDeleteQuery = t.Object({
  linkIds: t.String({ minLength: 1, maxLength: 10_000, description: 'Comma-separated link ids, 1-100; unknown ids are ignored.' }),
})
