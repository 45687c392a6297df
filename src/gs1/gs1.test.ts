/**
 * Table tests from the GS1 standards' own examples: GTINs of every length (GS1 General
 * Specifications), Digital Link URIs (URI syntax 1.4: key qualifiers in order, data attributes,
 * percent-encoding), and the resolver's choices and linkset (GS1-Conformant Resolver standard,
 * RFC 9264). GS1's own JavaScript library (digital-link.js) judges every URI its grammar covers,
 * independently of our parser.
 */
import { describe, expect, test } from 'bun:test'
import { type Static, Type as t } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
// @ts-expect-error digital-link.js ships no types
import { DigitalLink } from 'digital-link.js'
import { checkDigitOf, gtin14, gtinProblem } from './gs1.gtin'
import { byLanguage, chooseLink, linksetOf, productOf } from './gs1.product'
import { resolverDescription, wantsLinkset } from './gs1.resolver'
import { isGs1Path, parseGs1Path } from './gs1.uri'
import { GS1_LINK_TYPES } from './gs1.vocabulary'

describe('GTINs', () => {
  test.each([
    ['95012346', '00000095012346'], // GTIN-8 (GS1 example)
    ['614141000036', '00614141000036'], // GTIN-12 (UPC-A)
    ['9506000134352', '09506000134352'], // GTIN-13 (EAN-13)
    ['09506000134352', '09506000134352'], // GTIN-14
    ['4006381333931', '04006381333931'],
  ])('%s is valid and matched as %s', (raw, fourteen) => {
    expect(gtinProblem(raw)).toBeNull()
    expect(gtin14(raw)).toBe(fourteen)
  })
  test.each([
    ['09506000134353', 'wrong check digit (expected 2'],
    ['9506000134353', 'wrong check digit'],
    ['95012345', 'wrong check digit (expected 6'],
    ['095060001343521', 'must have 8, 12, 13 or 14 digits'],
    ['1234567', 'must have 8, 12, 13 or 14 digits'],
    ['0950600013435A', 'digits only'],
    ['', 'digits only'],
  ])('%s is refused: %s', (raw, why) => {
    expect(gtinProblem(raw)).toContain(why)
    expect(gtin14(raw)).toBeNull()
  })
  test('the check digit weighs 3, 1, 3 … from the right', () => {
    expect(checkDigitOf('0950600013435')).toBe(2)
    expect(checkDigitOf('9501234')).toBe(6)
  })
})

describe('Digital Link URI syntax 1.4', () => {
  const ok = (path: string, search = '') => {
    const r = parseGs1Path(path, search)
    if (!r.ok) throw new Error(r.message)
    return r.request
  }
  test.each([
    ['/01/09506000134352', '', {}, '/01/09506000134352'],
    ['/01/9506000134352', '', {}, '/01/09506000134352'],
    ['/01/95012346', '', {}, '/01/00000095012346'],
    ['/01/614141000036', '', {}, '/01/00614141000036'],
    ['/01/09506000134352/', '', {}, '/01/09506000134352'],
    ['/01/09506000134352/10/AB-123', '', { lot: 'AB-123' }, '/01/09506000134352/10/AB-123'],
    ['/01/09521234543213/10/ABC123/21/12345', '17=261231', { lot: 'ABC123', serial: '12345' }, '/01/09521234543213/10/ABC123/21/12345'],
    ['/01/09506000134352/22/2A/10/L42/21/S1', '', { cpv: '2A', lot: 'L42', serial: 'S1' }, '/01/09506000134352/22/2A/10/L42/21/S1'],
    ['/01/09506000134352/21/12345', '', { serial: '12345' }, '/01/09506000134352/21/12345'],
    ['/01/09506000134352/235/TPX-0001', '', { tpx: 'TPX-0001' }, '/01/09506000134352/235/TPX-0001'],
    ['/01/09506000134352/10/L%2F42', '', { lot: 'L/42' }, '/01/09506000134352/10/L%2F42'],
    ['/01/09506000134352/10/A%2Bb', '3103=000189&15=270100', { lot: 'A+b' }, '/01/09506000134352/10/A%2Bb'],
  ])('%s ?%s is read', (path, search, qualifiers, canonical) => {
    const r = ok(path, search)
    expect(r.qualifiers).toEqual(qualifiers)
    expect(r.canonicalPath).toBe(canonical)
  })

  test.each([
    ['/01/09506000134353', '', 'wrong check digit'],
    ['/01/0950600013', '', '8, 12, 13 or 14 digits'],
    ['/01/ABCDEFGH', '', 'digits only'],
    ['/01/09506000134352/foo', '', 'has no value'],
    ['/01/09506000134352/21/S1/10/L42', '', 'out of order'],
    ['/01/09506000134352/10/L1/10/L2', '', 'out of order'],
    ['/01/09506000134352/10/L1/235/T', '', 'out of order'],
    ['/01/09506000134352/99/X', '', 'not a key qualifier'],
    ['/01/09506000134352/10/ABCDEFGHIJKLMNOPQRSTU', '', '1-20 characters'],
    ['/01/09506000134352/10/L%2042', '', 'character set 82'],
    ['/01/09506000134352/10/%E0', '', 'malformed percent-escape'],
    ['/01/09506000134352/10/', '', 'has no value'],
    ['/01/09506000134352', '17=2712', 'date YYMMDD'],
    ['/01/09506000134352', '17=271331', 'date YYMMDD'],
    ['/01/09506000134352', '3103=18', '6 digits'],
    ['/01/09506000134352', '10=L42', 'belongs in the path'],
    ['/01/09506000134352', '01=09506000134352', 'belongs in the path'],
    ['/01/09506000134352', '9999=1', 'not a GS1 Application Identifier'],
  ])('%s ?%s is 400: %s', (path, search, why) => {
    const r = parseGs1Path(path, search)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.message).toContain(why)
  })

  test('linkType is read (CURIE or full URI, any case of the name) and never passed on; other parameters are', () => {
    expect(ok('/01/09506000134352', 'linkType=gs1:pip&17=271231&foo=bar').linkType).toBe('gs1:pip')
    expect(ok('/01/09506000134352', 'linktype=https://gs1.org/voc/recipeInfo').linkType).toBe('gs1:recipeInfo')
    expect(ok('/01/09506000134352', 'linkType=https%3A%2F%2Fref.gs1.org%2Fvoc%2Fpip').linkType).toBe('gs1:pip')
    expect(ok('/01/09506000134352', 'linkType=all&qr=1&17=271231').passOn.toString()).toBe('qr=1&17=271231')
  })

  test('only /01/… paths are GS1 requests', () => {
    expect(isGs1Path('/01/09506000134352')).toBe(true)
    for (const p of ['/01', '/0109506000134352', '/abc', '/02/1', '/011/2']) expect(isGs1Path(p)).toBe(false)
  })

  // GS1's library and ours agree on every URI its grammar covers (it predates AI 235 and the
  // standard's 14-digit rule, lets an unknown path through as not-a-DL rather than invalid, and
  // reads a date's month loosely: 17=271331 passes there and is 400 here).
  test.each([
    ['/01/09506000134352', ''],
    ['/01/09506000134353', ''],
    ['/01/09506000134352/10/AB-123', ''],
    ['/01/09506000134352/21/S1/10/L42', ''],
    ['/01/09506000134352/22/2A/10/L42/21/S1', '17=271231'],
    ['/01/09506000134352', '17=2712'],
    ['/01/09506000134352/10/L%2F42', ''],
    ['/01/09506000134352/10/ABCDEFGHIJKLMNOPQRSTU', ''],
    ['/01/09506000134352', '3103=000189'],
  ])('digital-link.js agrees on %s ?%s', (path, search) => {
    const theirs = DigitalLink(`https://example.com${path}${search ? `?${search}` : ''}`).isValid()
    expect(parseGs1Path(path, search).ok).toBe(theirs)
  })
})

const PRODUCT = productOf({
  gtin: '09506000134352',
  url: 'https://brand.example/olive-oil',
  links: [
    { linkType: 'gs1:pip', url: 'https://brand.example/en/pip', lang: 'en' },
    { linkType: 'gs1:pip', url: 'https://brand.example/fr/pip', lang: 'fr', title: 'Fiche produit' },
    { linkType: 'gs1:recipeInfo', url: 'https://brand.example/recipes' },
    { linkType: 'gs1:certificationInfo', url: 'https://cert.example/1', lang: 'de-CH' },
  ],
  lots: [
    { lot: 'L42', url: 'https://brand.example/recall/L42' },
    { lot: 'L43', links: [{ linkType: 'gs1:pip', url: 'https://brand.example/L43/pip' }] },
  ],
})

describe('the link a request gets', () => {
  test.each([
    [{ linkType: null, languages: [] }, 'https://brand.example/olive-oil', false],
    [{ linkType: 'gs1:defaultLink', languages: [] }, 'https://brand.example/olive-oil', false],
    [{ lot: 'L42', linkType: null, languages: [] }, 'https://brand.example/recall/L42', true],
    [{ lot: 'L43', linkType: null, languages: [] }, 'https://brand.example/olive-oil', false], // a lot without its own url
    [{ lot: 'NOPE', linkType: null, languages: [] }, 'https://brand.example/olive-oil', false], // unknown lots walk up to the product
    [{ linkType: 'gs1:pip', languages: ['fr-ch', 'en'] }, 'https://brand.example/fr/pip', true],
    [{ linkType: 'gs1:pip', languages: ['en-gb'] }, 'https://brand.example/en/pip', true],
    [{ linkType: 'gs1:pip', languages: ['ja'] }, 'https://brand.example/en/pip', true],
    [{ lot: 'L43', linkType: 'gs1:pip', languages: ['fr'] }, 'https://brand.example/L43/pip', true], // lot links first
    [{ lot: 'L42', linkType: 'gs1:pip', languages: ['fr'] }, 'https://brand.example/fr/pip', true], // the lot has none: the product's
    [{ linkType: 'gs1:recipeInfo', languages: ['de'] }, 'https://brand.example/recipes', true],
    [{ linkType: 'gs1:certificationInfo', languages: ['de'] }, 'https://cert.example/1', true],
  ] as const)('%j → %s', (req, url, specific) => {
    expect(chooseLink(PRODUCT, { ...req, languages: [...req.languages] })).toMatchObject({ kind: 'target', url, specific })
  })
  test('a link type the product lacks answers no link (the resolver: 404)', () => {
    expect(chooseLink(PRODUCT, { linkType: 'gs1:nosuchlt', languages: [] })).toEqual({ kind: 'no-link', linkType: 'gs1:nosuchlt' })
    expect(chooseLink(PRODUCT, { linkType: 'gs1:allergenInfo', languages: [] }).kind).toBe('no-link')
  })
  test('without a language match, a link without a language comes first', () => {
    const links = [{ lang: 'en', id: 1 }, { id: 2 }] as { lang?: string; id: number }[]
    expect(byLanguage(links, ['ja'])?.id).toBe(2)
    expect(byLanguage(links, ['en-us'])?.id).toBe(1)
  })
})

/** RFC 9264 section 4.2 in JSON, as GS1's resolver standard constrains it (its linkset schema). */
const Target = t.Object(
  {
    href: t.String({ pattern: '^https?://' }),
    title: t.String(),
    hreflang: t.Optional(t.Array(t.String({ pattern: '(^\\w{2}$)|(^\\w{2}-\\w{2}$)' }))),
    type: t.Optional(t.String()),
  },
  { additionalProperties: false },
)
const ContextObject = t.Intersect([
  t.Object({ anchor: t.String({ pattern: '^https?://' }), itemDescription: t.String() }),
  t.Record(t.String({ pattern: '^(anchor|itemDescription|https?://.+|[a-z-]+)$' }), t.Union([t.String(), t.Array(Target, { minItems: 1 })])),
])
const Linkset = t.Object({ linkset: t.Array(ContextObject, { minItems: 1 }) }, { additionalProperties: false })

describe('the linkset (RFC 9264)', () => {
  const origin = 'https://brand.example'
  test('lot contexts come first, every link has a title, the default link is the only gs1:defaultLink', () => {
    const set = linksetOf(PRODUCT, { origin, name: 'Olive oil' }) as Static<typeof Linkset>
    expect(Value.Check(Linkset, set)).toBe(true)
    expect(set.linkset.map((c) => c.anchor)).toEqual([
      'https://brand.example/01/09506000134352/10/L42',
      'https://brand.example/01/09506000134352/10/L43',
      'https://brand.example/01/09506000134352',
    ])
    const product = set.linkset[2]! as Record<string, unknown>
    expect(product['https://gs1.org/voc/defaultLink']).toEqual([{ href: 'https://brand.example/olive-oil', title: 'Default link' }])
    expect(product['https://gs1.org/voc/pip']).toEqual([
      { href: 'https://brand.example/en/pip', title: 'Product information', hreflang: ['en'] },
      { href: 'https://brand.example/fr/pip', title: 'Fiche produit', hreflang: ['fr'] },
    ])
    expect((set.linkset[0]! as Record<string, unknown>)['https://gs1.org/voc/defaultLink']).toEqual([
      { href: 'https://brand.example/recall/L42', title: 'Default link' },
    ])
  })
  test('a request for a lot lists that lot and the product (each level up to the primary key)', () => {
    const set = linksetOf(PRODUCT, { origin, name: 'Olive oil', lot: 'L43' })
    expect(set.linkset.map((c) => c.anchor)).toEqual(['https://brand.example/01/09506000134352/10/L43', 'https://brand.example/01/09506000134352'])
    expect(linksetOf(PRODUCT, { origin, name: 'x', lot: 'NOPE' }).linkset).toHaveLength(1)
  })
  test('content negotiation: application/linkset+json or application/json asks for it; HTML does not', () => {
    expect(wantsLinkset('application/linkset+json')).toBe(true)
    expect(wantsLinkset('application/json, text/plain')).toBe(true)
    expect(wantsLinkset('text/html,application/xhtml+xml,*/*;q=0.8')).toBe(false)
    expect(wantsLinkset(null)).toBe(false)
  })
})

test('the resolver description names the GTIN key, the GS1 namespace and every link type', () => {
  const d = resolverDescription('https://brand.example', 'brand.example')
  expect(d).toMatchObject({
    resolverRoot: 'https://brand.example',
    supportedPrimaryKeys: ['01'],
    supportedLinkType: [{ namespace: 'https://gs1.org/voc/', prefix: 'gs1:' }],
  })
  expect(Object.keys(d.activeLinkTypes).sort()).toEqual([...GS1_LINK_TYPES].sort())
})
