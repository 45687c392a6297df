/**
 * Input rules for link writes: the checks and normalisations a create, update or bulk
 * body passes before anything is stored, in the order their errors are reported.
 * Throws AppError (422 parameter_error); writes nothing.
 */
import type { Static } from '@sinclair/typebox'
import { customAlphabet } from 'nanoid'
import type { Settings } from '../config'
import { normaliseHost } from '../domains'
import { AppError, parameterError } from '../shared'
import type { TagStorePort } from '../tags'
import { TEST_MAX_DURATION_MS } from './links.ab.values'
import { checkData, checkTargeting, type LinkDataValue, normaliseUrl } from './links.content'
import { hasHealth } from './links.health'
import { keyOfShortLinkPath, mergeStoredOptions, type StoredOptions } from './links.record'
import { CREATE_TYPES, type LinkType, type UpdateLinkInput } from './links.schema'
import type { LinkStorePort } from './links.store'
import { CONVERSION_TYPES } from './links.values'

const randomKey = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 7)
/** A `testCompletedAt` this much in the past is taken as now (ending a test early). */
const TEST_END_SLACK_MS = 60_000
/** Paths the API host serves itself; on that host they cannot be slugs. */
const RESERVED_KEYS = ['api', 'app', 'qr', 'docs', 'openapi', 'files', 'static', 'assets', 'health', 'admin', 'login', 'logout', 'dashboard', 'p', 'well-known']

/** A create, update or bulk `updateData` body as validated by the route (`data` is checked here, per type). */
export type LinkBody = Static<typeof UpdateLinkInput>
export type LinkOptionsInput = NonNullable<LinkBody['linkOptions']>

/** Option values ready to store, with undefined meaning "leave as is" and null "clear". */
export type PreparedOptions = StoredOptions & { passwordHash?: string | null; expiresAt?: number | null }

export interface PreparedCreate {
  type: LinkType
  data: LinkDataValue
  o: LinkOptionsInput
  domain: string
  options: PreparedOptions
  now: number
}

export interface PreparedUpdate {
  data?: LinkDataValue
  options: PreparedOptions
  o: LinkOptionsInput
  qrOptions?: Record<string, unknown> | null
}

export interface LinkRulesDeps {
  store: Pick<LinkStorePort, 'keyTaken'>
  tags: Pick<TagStorePort, 'get'>
  settings: Settings
  /** Default domains, or custom domains that are configured and not archived. */
  isUsableDomain(slug: string): boolean | Promise<boolean>
  /** Refuses QR designs that cannot scan and, given the link's owner, files the owner may not use (the QR module plugs in here). */
  checkQrOptions?(qrOptions: Record<string, unknown>, ownerId?: string): void | Promise<void>
  /** Whether a file exists and may be used by this owner (the files module plugs in here). */
  fileUsable?(fileId: string, ownerId: string): boolean | Promise<boolean>
  /** The clock (tests step it instead of sleeping for distinct timestamps). */
  now?: () => number
}

/** A write named a domain and key a live link holds (a GS1 product's key is its GTIN). */
const keyTakenError = (domain: string, key: string, type?: string) =>
  type === 'gs1'
    ? parameterError(`'data.gtin' ${key} is already used on ${domain} (one GTIN per domain)`)
    : parameterError(`'linkOptions.key' '${key}' is already used on ${domain}`)

export function createLinkRules(deps: LinkRulesDeps) {
  const clock = deps.now ?? Date.now
  const { store, settings } = deps

  function assertType(type: string): LinkType {
    if (!(CREATE_TYPES as readonly string[]).includes(type)) throw parameterError(`'type' must be one of ${CREATE_TYPES.join(', ')}`)
    return type as LinkType
  }

  async function checkDomain(domain: string): Promise<string> {
    // Stored as the Host header will carry it: lower-case punycode.
    const d = normaliseHost(domain)
    if (!(await deps.isUsableDomain(d)))
      throw parameterError(`'linkOptions.domain' ${d} is neither a default short domain (${settings.defaultDomains.join(', ')}) nor a configured custom domain`)
    return d
  }

  async function checkKey(domain: string, key: string, exceptSeq?: number, type?: LinkType): Promise<void> {
    if (domain === settings.apiHost) {
      const reserved = [...RESERVED_KEYS, settings.apiPrefix.split('/')[1] ?? ''].filter(Boolean)
      if (reserved.includes(key.toLowerCase())) throw parameterError(`'linkOptions.key' '${key}' is reserved on ${domain}`)
    }
    if (await store.keyTaken(domain, key, exceptSeq)) throw keyTakenError(domain, key, type)
  }

  async function freshKey(domain: string): Promise<string> {
    for (let i = 0; i < 20; i++) {
      const k = randomKey()
      if (!(await store.keyTaken(domain, k))) return k
    }
    throw new AppError('internal_server_error', 'could not find a free random key')
  }

  async function checkTags(ownerId: string, tagIds: string[]): Promise<void> {
    for (const [i, id] of tagIds.entries()) {
      const tag = await deps.tags.get(id)
      if (!tag || tag.userId !== ownerId) throw parameterError(`'linkOptions.tags.${i}' ${id} is not a tag of the link's owner`)
    }
  }

  async function checkFiles(data: LinkDataValue, ownerId: string): Promise<void> {
    if (typeof data.fileId !== 'string') return
    if (deps.fileUsable ? !(await deps.fileUsable(data.fileId, ownerId)) : true)
      throw parameterError(`'data.fileId' ${data.fileId} is not a file of the link's owner`)
  }

  async function prepareOptions(o: LinkOptionsInput, now: number): Promise<PreparedOptions> {
    const out: PreparedOptions = {}
    if (o.comment !== undefined) out.comments = o.comment
    if (o.expiration !== undefined) {
      if (o.expiration === null) {
        out.expiration = null
        out.expiresAt = null
      } else {
        const at = Date.parse(o.expiration.time)
        if (!(at > now)) throw parameterError(`'linkOptions.expiration.time' must be in the future`)
        out.expiration = { time: new Date(at).toISOString(), url: normaliseUrl(o.expiration.url, 'linkOptions.expiration.url', 3) }
        out.expiresAt = at
      }
    }
    if (o.utm !== undefined) out.utm = o.utm && Object.keys(o.utm).length ? o.utm : null
    if (o.option !== undefined) out.option = o.option
    if (o.previewData !== undefined) {
      out.previewData = o.previewData ? { ...o.previewData } : null
      if (out.previewData?.image) out.previewData.image = normaliseUrl(out.previewData.image, 'linkOptions.previewData.image')
    }
    if (o.Targeting !== undefined) {
      const targeting = o.Targeting ? structuredClone(o.Targeting) : null
      checkTargeting(targeting)
      out.Targeting = targeting
    }
    if (o.trackConversion !== undefined) out.trackConversion = o.trackConversion === true ? true : null
    if (o.password !== undefined) out.passwordHash = o.password === null ? null : await Bun.password.hash(o.password)
    if (o.healthFallbackUrl !== undefined)
      out.healthFallbackUrl = o.healthFallbackUrl === null ? null : normaliseUrl(o.healthFallbackUrl, 'linkOptions.healthFallbackUrl')
    prepareTest(o, out, now)
    return out
  }

  /** A/B test fields: variants normalised (a new test starts counting now), the end time checked; null variants remove the test. */
  function prepareTest(o: LinkOptionsInput, out: PreparedOptions, now: number): void {
    if (o.testVariants === null) {
      Object.assign(out, { testVariants: null, testCompletedAt: null, testGoal: null, testStartedAt: null })
      return
    }
    if (o.testVariants !== undefined) {
      const sum = o.testVariants.reduce((a, v) => a + v.percentage, 0)
      if (sum !== 100) throw parameterError(`'linkOptions.testVariants' percentages must sum to 100 (got ${sum})`)
      out.testVariants = o.testVariants.map((v, i) => ({ url: normaliseUrl(v.url, `linkOptions.testVariants.${i}.url`), percentage: v.percentage }))
      out.testStartedAt = now
    }
    if (o.testCompletedAt != null) {
      const at = Date.parse(o.testCompletedAt)
      // "Now" ends a test early: a moment ago is taken as now (clocks of caller and server differ).
      if (!(at >= now - TEST_END_SLACK_MS)) throw parameterError(`'linkOptions.testCompletedAt' must not be in the past`)
      if (at > now + TEST_MAX_DURATION_MS) throw parameterError(`'linkOptions.testCompletedAt' must be at most a year ahead`)
      out.testCompletedAt = new Date(Math.max(at, now)).toISOString()
    } else if (o.testCompletedAt === null) out.testCompletedAt = null
    if (o.testGoal !== undefined) out.testGoal = o.testGoal
  }

  /** A fallback URL only means something where visitors go to a checked URL. */
  function checkOptionsForType(type: string, options: PreparedOptions): void {
    if (options.healthFallbackUrl && !hasHealth(type))
      throw parameterError(`'linkOptions.healthFallbackUrl' applies to link, google-form and gs1 links only (this link is ${type})`)
  }

  /**
   * The A/B test of a link as it will be stored (`merged`), given what this write changes: the
   * test needs its end time and conversion tracking; an ended test restarts only with its variants.
   */
  function checkTest(type: string, stored: StoredOptions, merged: StoredOptions, changes: PreparedOptions, now: number): void {
    const touched = changes.testVariants !== undefined || changes.testCompletedAt !== undefined || changes.testGoal !== undefined
    if (!touched && changes.trackConversion === undefined) return
    if (!merged.testVariants) {
      if (changes.testCompletedAt || changes.testGoal) throw parameterError(`'linkOptions.testCompletedAt' and 'testGoal' need 'linkOptions.testVariants'`)
      return
    }
    if (!hasHealth(type)) throw parameterError(`'linkOptions.testVariants' applies to link, google-form and gs1 links only (this link is ${type})`)
    if (!merged.testCompletedAt) throw parameterError(`'linkOptions.testCompletedAt' is required with 'linkOptions.testVariants'`)
    if (!merged.trackConversion) throw parameterError(`'linkOptions.testVariants' needs 'linkOptions.trackConversion': true`)
    const ended = stored.testCompletedAt != null && Date.parse(stored.testCompletedAt) <= now
    if (ended && changes.testVariants === undefined && changes.testCompletedAt)
      throw parameterError(`the A/B test has ended: send 'linkOptions.testVariants' with the new 'testCompletedAt' to start another`)
    // The same variants sent again to a running test (a form saved whole, an end moved) keep its counts: it goes on.
    if (!ended && changes.testVariants && stored.testStartedAt != null && JSON.stringify(changes.testVariants) === JSON.stringify(stored.testVariants))
      merged.testStartedAt = stored.testStartedAt
  }

  /** A new link's body, checked for its owner. */
  async function prepareCreate(ownerId: string, typeParam: string, body: LinkBody): Promise<PreparedCreate> {
    const type = assertType(typeParam)
    const data = checkData(type, body.data)
    await checkFiles(data, ownerId)
    const o = body.linkOptions ?? {}
    const now = clock()
    const domain = await checkDomain(o.domain ?? settings.defaultDomains[0]!)
    if (type === 'gs1') {
      if (o.key !== undefined && o.key !== data.gtin) throw parameterError(`'linkOptions.key' of a gs1 link is its GTIN (${data.gtin}); leave it out`)
      if (await store.keyTaken(domain, data.gtin)) throw keyTakenError(domain, data.gtin, type)
    } else if (o.key !== undefined) await checkKey(domain, o.key)
    if (o.tags) await checkTags(ownerId, o.tags)
    checkTrackConversion(type, o.trackConversion)
    const options = await prepareOptions(o, now)
    checkOptionsForType(type, options)
    checkTest(type, {}, mergeStoredOptions({}, options), options, now)
    if (body.qrOptions) await deps.checkQrOptions?.(body.qrOptions, ownerId)
    return { type, data, o, domain, options, now }
  }

  /**
   * Changes to links of one type (null: `data` is not checked), checked for their owner
   * when they share one; the rules that depend on each link run again as it is written.
   */
  async function prepareUpdate(type: LinkType | null, body: LinkBody, ownerId: string | null): Promise<PreparedUpdate> {
    const data = body.data !== undefined && type ? checkData(type, body.data) : undefined
    if (data && ownerId) await checkFiles(data, ownerId)
    const o = body.linkOptions ?? {}
    if (o.domain !== undefined) o.domain = await checkDomain(o.domain)
    if (o.tags && ownerId) await checkTags(ownerId, o.tags)
    const options = await prepareOptions(o, clock())
    if (body.qrOptions) await deps.checkQrOptions?.(body.qrOptions)
    return { data, options, o, qrOptions: body.qrOptions }
  }

  return { assertType, checkDomain, checkKey, freshKey, checkTags, checkFiles, checkOptionsForType, checkTest, prepareCreate, prepareUpdate, keyTakenError }
}
export type LinkRules = ReturnType<typeof createLinkRules>

export function checkTrackConversion(type: string, trackConversion: boolean | null | undefined): void {
  if (trackConversion === true && !CONVERSION_TYPES.includes(type))
    throw parameterError(`'linkOptions.trackConversion' needs a link whose visitors go to an http(s) URL (${CONVERSION_TYPES.join(', ')}), not ${type}`)
}

/** `shortLinks` filter values: full short links → domain and key. */
export function parseShortLink(s: string, i: number): { domain: string; key: string } {
  try {
    const u = new URL(s)
    return { domain: u.hostname.toLowerCase(), key: keyOfShortLinkPath(u.pathname) }
  } catch {
    throw parameterError(`'shortLinks.${i}' must be a full short link such as https://example.com/abc`)
  }
}
