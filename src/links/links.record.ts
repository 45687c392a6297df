/**
 * The one reader of a stored link row: the JSON columns (`options`, `data`,
 * `qr_options`) are parsed here and nowhere else. A row becomes the API record (typed
 * from the response schema) or the view the redirect server resolves visits with.
 * The writer side of `options` (merging changes) lives here too, so the stored shape
 * has one owner.
 */
import type { Static } from '@sinclair/typebox'
import type { Settings } from '../config'
import { toIso } from '../shared'
import type { TestGoal } from './links.ab.values'
import { isHosted, type LinkDataValue } from './links.content'
import type { LinkHealth } from './links.health'
import type { ContentOption, Expiration, LinkRecord as LinkRecordSchema, PreviewData, Targeting, TestVariants, Utm } from './links.schema'
import type { LinkRow } from './links.store'

/** A link as the API returns it: exactly the response schema's type, so routes need no casts. */
export type LinkRecord = Static<typeof LinkRecordSchema>

/** The JSON kept in `links.options`; a cleared (null) field is left out. */
export interface StoredOptions {
  comments?: string | null
  expiration?: Static<typeof Expiration> | null
  utm?: Static<typeof Utm> | null
  option?: Static<typeof ContentOption> | null
  previewData?: Static<typeof PreviewData> | null
  Targeting?: Static<typeof Targeting> | null
  /** Kept only when true. */
  trackConversion?: true | null
  healthFallbackUrl?: string | null
  testVariants?: Static<typeof TestVariants> | null
  testCompletedAt?: string | null
  testGoal?: TestGoal | null
  /** When the current test's variants were set (ms): its visits and conversions count from then. */
  testStartedAt?: number | null
}

/** The URLs a record names: short links on their domain, QR images under the API. */
export type RecordOrigins = Pick<Settings, 'baseUrl' | 'shortOrigin'>

/**
 * The key a short link's path names: `/abc` → `abc`; a GS1 product's `/01/<gtin>` (any GTIN
 * length) → its 14-digit GTIN. Throws on a malformed percent-escape.
 */
export function keyOfShortLinkPath(pathname: string): string {
  const gs1 = /^\/01\/([0-9]{8,14})\/?$/.exec(pathname)
  if (gs1) return gs1[1]!.padStart(14, '0')
  return decodeURIComponent(pathname.replace(/^\/+/, ''))
}

/** A GS1 product's short link is its Digital Link URI, `/01/<gtin>`. */
export const shortLinkOf = (origins: Pick<RecordOrigins, 'shortOrigin'>, domain: string, key: string, linkType?: string) =>
  `${origins.shortOrigin(domain)}/${linkType === 'gs1' ? '01/' : ''}${key}`

export const storedOptionsOf = (row: Pick<LinkRow, 'options'>): StoredOptions => JSON.parse(row.options) as StoredOptions
export const storedDataOf = (row: Pick<LinkRow, 'data'>): LinkDataValue => JSON.parse(row.data) as LinkDataValue

/** Row → API record; `tags` are the link's tag ids in their stored order, `health` as the link-health module knows it. */
export function linkRecordOf(row: LinkRow, tags: string[], origins: RecordOrigins, health: LinkHealth | null): LinkRecord {
  const o = storedOptionsOf(row)
  return {
    id: row.id,
    domain: row.domain,
    key: row.key,
    shortLink: shortLinkOf(origins, row.domain, row.key, row.link_type),
    qrCode: `${origins.baseUrl}/qr/${row.id}`,
    linkType: row.link_type,
    destination: row.destination,
    clicks: row.clicks,
    importedClicks: row.imported_clicks,
    hasPassword: row.password_hash !== null,
    createdAt: toIso(row.created_at)!,
    updatedAt: toIso(row.updated_at)!,
    lastClicked: toIso(row.last_clicked),
    tags,
    comments: o.comments ?? null,
    expiration: o.expiration ?? null,
    utm: o.utm ?? null,
    option: o.option ?? null,
    previewData: o.previewData ?? null,
    Targeting: o.Targeting ?? null,
    trackConversion: o.trackConversion === true,
    userId: row.user_id,
    archived: row.archived === 1,
    data: storedDataOf(row),
    qrOptions: row.qr_options === null ? null : JSON.parse(row.qr_options),
    testVariants: o.testVariants ?? null,
    testCompletedAt: o.testCompletedAt ?? null,
    testGoal: o.testVariants ? (o.testGoal ?? 'leads') : (o.testGoal ?? null),
    healthFallbackUrl: o.healthFallbackUrl ?? null,
    health,
  }
}

/**
 * What the redirect server needs of a live link, decoded once when the link enters its
 * cache. The redirect adds what only it computes (the destination with UTM merged).
 */
export interface StoredLinkView {
  seq: number
  id: string
  domain: string
  key: string
  linkType: string
  destination: string
  hosted: boolean
  expiresAt: number | null
  expirationUrl: string | null
  passwordHash: string | null
  utm: Static<typeof Utm> | null
  previewData: Static<typeof PreviewData> | null
  Targeting: Static<typeof Targeting> | null
  /** app-stores links: store URLs iOS and Android visitors go straight to. */
  appStores: { ios?: string; android?: string } | null
  /** Counted visits get a click id, handed to the destination as `sl_id`. */
  trackConversion: boolean
  /** Where a visit goes instead when its resolved URL is broken. */
  healthFallbackUrl: string | null
  /** The A/B test's split, while it runs (until `endsAt`); null without one. */
  test: { variants: { url: string; percentage: number }[]; startedAt: number; endsAt: number } | null
}

export function storedLinkViewOf(row: LinkRow): StoredLinkView {
  const o = storedOptionsOf(row)
  const data = row.link_type === 'app-stores' ? storedDataOf(row) : null
  return {
    seq: row.seq,
    id: row.id,
    domain: row.domain,
    key: row.key,
    linkType: row.link_type,
    destination: row.destination,
    hosted: isHosted(row.link_type),
    expiresAt: row.expires_at,
    expirationUrl: o.expiration?.url ?? null,
    passwordHash: row.password_hash,
    utm: o.utm ?? null,
    previewData: o.previewData ?? null,
    Targeting: o.Targeting ?? null,
    appStores: data ? { ios: data.ios, android: data.android } : null,
    trackConversion: o.trackConversion === true,
    healthFallbackUrl: o.healthFallbackUrl ?? null,
    test: o.testVariants && o.testCompletedAt ? { variants: o.testVariants, startedAt: o.testStartedAt ?? 0, endsAt: Date.parse(o.testCompletedAt) } : null,
  }
}

/** The options JSON after an update: given fields replace stored ones, and null clears a field. */
export function mergeStoredOptions(current: StoredOptions, changes: StoredOptions): StoredOptions {
  const merged: StoredOptions = { ...current }
  for (const k of STORED_OPTION_KEYS) if (changes[k] !== undefined) Object.assign(merged, { [k]: changes[k] })
  for (const k of Object.keys(merged) as (keyof StoredOptions)[]) if (merged[k] === null) delete merged[k]
  return merged
}
const STORED_OPTION_KEYS = [
  'comments',
  'expiration',
  'utm',
  'option',
  'previewData',
  'Targeting',
  'trackConversion',
  'healthFallbackUrl',
  'testVariants',
  'testCompletedAt',
  'testGoal',
  'testStartedAt',
] as const
