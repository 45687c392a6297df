/**
 * GS1 Digital Link URI syntax 1.4 for the GTIN primary key, as a resolver reads it: the path
 * `/01/<gtin>` followed by the key qualifiers of a GTIN in the standard's order (`/22/<cpv>`,
 * `/10/<lot>`, `/21/<serial>`; or `/235/<tpx>` alone) and data attributes as query parameters
 * whose names are GS1 Application Identifiers (`?17=271231`). Pure and allocation-light: it runs
 * on the resolver's path for every GS1 request.
 *
 * Not a library (digital-link.js): it validates with a general ABNF parser at about 16 ms per URI
 * (measured), predates key qualifier 235, and would be the slowest step of a redirect by far; it
 * checks our verdicts in the table tests instead.
 */
import { decodePathSegment } from '../shared'
import { gtinProblem } from './gs1.gtin'
import { curieOf } from './gs1.vocabulary'

export interface Gs1Qualifiers {
  /** AI 22: consumer product variant. */
  cpv?: string
  /** AI 10: batch/lot. */
  lot?: string
  /** AI 21: serial number. */
  serial?: string
  /** AI 235: third-party controlled, serialised extension of the GTIN. */
  tpx?: string
}

export interface Gs1Request {
  /** The GTIN as 14 digits. */
  gtin: string
  qualifiers: Gs1Qualifiers
  /** The canonical path: `/01/<gtin14>` and the qualifiers, percent-encoded as needed. */
  canonicalPath: string
  /** `linkType` asked for, as `gs1:<name>` (or as given, when not a GS1 URI); null when absent. */
  linkType: string | null
  /** The query without `linkType`, passed on to the target (data attributes and any other parameter). */
  passOn: URLSearchParams
}

export type Gs1Parse = { ok: true; request: Gs1Request } | { ok: false; message: string }

/** AI code → qualifier field and its largest length; the order of a GTIN's path. */
const QUALIFIERS: Record<string, { field: keyof Gs1Qualifiers; max: number; order: number }> = {
  '22': { field: 'cpv', max: 20, order: 1 },
  '10': { field: 'lot', max: 20, order: 2 },
  '21': { field: 'serial', max: 20, order: 3 },
  '235': { field: 'tpx', max: 28, order: 4 },
}

/** GS1 AI encodable character set 82. */
const CSET82 = /^[!"%&'()*+,./0-9:;<=>?A-Z_a-z-]+$/

/** AIs that are primary keys: they name the thing, so never a data attribute. */
const PRIMARY_KEYS = new Set(['00', '01', '253', '255', '401', '402', '414', '417', '8003', '8004', '8006', '8010', '8013', '8017', '8018'])

/**
 * Formats of the AIs a Digital Link may carry as data attributes (GS1 General Specifications,
 * section 3): `d6` a date YYMMDD (DD 00 allowed where the AI allows it), `nK` exactly K digits,
 * `n..K` up to K digits, `x..K` up to K characters of set 82. Compound formats (currency and
 * amount, say) are checked as their whole length.
 */
function attributeFormat(ai: string): string | null {
  switch (ai) {
    case '11':
    case '12':
    case '13':
    case '15':
    case '16':
    case '17':
    case '7006':
      return 'd6'
    case '20':
    case '7241':
      return 'n2'
    case '30':
    case '37':
      return 'n..8'
    case '240':
    case '241':
    case '250':
    case '251':
    case '400':
    case '403':
    case '7002':
    case '90':
      return 'x..30'
    case '242':
      return 'n..6'
    case '243':
    case '420':
    case '8002':
    case '8012':
    case '7240':
      return 'x..20'
    case '410':
    case '411':
    case '412':
    case '413':
    case '415':
    case '416':
    case '7001':
      return 'n13'
    case '421':
      return 'x..12'
    case '422':
    case '424':
    case '426':
      return 'n3'
    case '423':
    case '425':
      return 'n..15'
    case '427':
    case '7008':
      return 'x..3'
    case '7003':
      return 'n10'
    case '7004':
      return 'n..4'
    case '7005':
      return 'x..12'
    case '7007':
      return 'n..12'
    case '7009':
      return 'x..10'
    case '7010':
      return 'x..2'
    case '7011':
      return 'n..10'
    case '7040':
    case '7041':
      return 'x..4'
    case '7250':
      return 'n8'
    case '7251':
      return 'n12'
    case '7252':
      return 'n1'
    case '8001':
      return 'n14'
    case '8005':
      return 'n6'
    case '8007':
      return 'x..34'
    case '8008':
      return 'n..12'
    case '8009':
      return 'x..50'
    case '8011':
      return 'n..12'
    case '8014':
    case '8020':
      return 'x..25'
    case '8019':
      return 'n..10'
    case '8026':
      return 'n18'
    case '8030':
      return 'x..90'
    case '8200':
      return 'x..70'
  }
  if (/^3[1-6][0-9][0-5]$/.test(ai)) return 'n6' // measures: 310n … 369n
  if (/^39[0-3][0-9]$/.test(ai)) return 'n..18' // amounts, with or without an ISO 4217 currency
  if (/^394[0-3]$/.test(ai)) return 'n4'
  if (/^395[0-5]$/.test(ai)) return 'n6'
  if (/^43[0-3][0-9]$/.test(ai)) return 'x..70' // ship-to / return-to details
  if (/^70(2[0-3]|3[0-9])$/.test(ai)) return 'x..30'
  if (/^71[0-6]$/.test(ai)) return 'x..20'
  if (/^72(2[0-9]|3[0-9]|4[2-9]|5[3-9])$/.test(ai)) return 'x..90'
  if (/^9[1-9]$/.test(ai)) return 'x..90'
  return null
}

function formatProblem(format: string, v: string): string | null {
  const kind = format[0]
  const variable = format.includes('..')
  const n = Number(format.slice(variable ? 3 : 1))
  if (format === 'd6') {
    if (!/^[0-9]{6}$/.test(v)) return 'must be a date YYMMDD'
    const mm = Number(v.slice(2, 4))
    const dd = Number(v.slice(4, 6))
    return mm >= 1 && mm <= 12 && dd <= 31 ? null : 'must be a date YYMMDD'
  }
  if (kind === 'n' && !/^[0-9]+$/.test(v)) return 'must be digits'
  if (kind === 'x' && !CSET82.test(v)) return 'holds a character outside GS1 character set 82'
  if (variable ? v.length > n : v.length !== n) return variable ? `must be at most ${n} characters` : `must be ${n} digits`
  return null
}

const encodeValue = (v: string) => encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/**
 * Reads `/01/…` (one trailing slash tolerated) and the query (without `?`). Errors name the
 * segment or parameter at fault; the resolver answers them with 400.
 */
export function parseGs1Path(path: string, search: string): Gs1Parse {
  const fail = (message: string): Gs1Parse => ({ ok: false, message })
  const trimmed = path.length > 4 && path.endsWith('/') ? path.slice(0, -1) : path
  const segments = trimmed.slice(1).split('/')
  if (segments[0] !== '01' || segments.length < 2) return fail('a GS1 Digital Link URI starts with /01/<GTIN>')
  if (segments.length % 2 !== 0) return fail(`'${segments.at(-1)}' has no value: the path is AI/value pairs`)
  const rawGtin = decodePathSegment(segments[1]!) ?? ''
  const problem = gtinProblem(rawGtin)
  if (problem) return fail(`the GTIN '${rawGtin}' ${problem}`)
  const gtin = rawGtin.padStart(14, '0')
  const qualifiers: Gs1Qualifiers = {}
  let canonicalPath = `/01/${gtin}`
  let lastOrder = 0
  for (let i = 2; i < segments.length; i += 2) {
    const ai = segments[i]!
    const q = QUALIFIERS[ai]
    if (!q) return fail(`'${ai}' is not a key qualifier of a GTIN (22, 10, 21 or 235, in that order)`)
    if (q.order <= lastOrder || (q.order === 4 && lastOrder > 0) || (lastOrder === 4 && q.order !== 4))
      return fail(`key qualifier ${ai} is out of order: a GTIN takes /22, /10, /21 in that order, or /235 alone`)
    lastOrder = q.order
    const value = decodePathSegment(segments[i + 1]!)
    if (value === null) return fail(`the value of AI ${ai} has a malformed percent-escape`)
    if (value.length < 1 || value.length > q.max || !CSET82.test(value))
      return fail(`the value of AI ${ai} must be 1-${q.max} characters of GS1 character set 82`)
    qualifiers[q.field] = value
    canonicalPath += `/${ai}/${encodeValue(value)}`
  }
  let linkType: string | null = null
  const passOn = new URLSearchParams()
  if (search) {
    let query: URLSearchParams
    try {
      query = new URLSearchParams(search)
    } catch {
      return fail('the query string is malformed')
    }
    for (const [key, value] of query) {
      if (key.toLowerCase() === 'linktype') {
        linkType = curieOf(value)
        continue
      }
      passOn.append(key, value)
      if (!/^[0-9]+$/.test(key)) continue
      if (key in QUALIFIERS || PRIMARY_KEYS.has(key)) return fail(`AI ${key} is a key or key qualifier: it belongs in the path, not the query`)
      const format = attributeFormat(key)
      if (!format) return fail(`'${key}' is not a GS1 Application Identifier that a Digital Link may carry as a data attribute`)
      const bad = formatProblem(format, value)
      if (bad) return fail(`the value of data attribute ${key} ${bad}`)
    }
  }
  return { ok: true, request: { gtin, qualifiers, canonicalPath, linkType, passOn } }
}

/** Whether a path is a GS1 Digital Link request (`/01/…`); everything else is an ordinary short link. */
export const isGs1Path = (path: string) => path.length > 4 && path.charCodeAt(1) === 48 && path.charCodeAt(2) === 49 && path.charCodeAt(3) === 47
