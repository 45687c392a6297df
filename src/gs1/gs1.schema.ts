/**
 * The `data` of a `gs1` link (a GS1 Digital Link product): the TypeBox schema that validates
 * requests, writes the OpenAPI document and gives the dashboard its rules (it imports this).
 */
import { type Static, Type as t } from '@sinclair/typebox'
import { GTIN_PATTERN, LANG_PATTERN, LOT_PATTERN, MAX_LOTS, MAX_PRODUCT_LINKS } from './gs1.rules'
import { GS1_LINK_TYPES } from './gs1.vocabulary'

const strict = { additionalProperties: false } as const
const Url = (description: string) => t.String({ minLength: 1, maxLength: 2000, format: 'uri', description: `${description} http or https, 1-2000 characters.` })

export const Gs1LinkTypeValue = t.Union(
  GS1_LINK_TYPES.map((v) => t.Literal(v)),
  { description: 'A link type of the GS1 Web Vocabulary written gs1:<name>, e.g. gs1:pip, gs1:recipeInfo, gs1:certificationInfo.' },
)

export const Gs1Link = t.Object(
  {
    linkType: Gs1LinkTypeValue,
    url: Url('Target of the link.'),
    title: t.Optional(
      t.String({ minLength: 1, maxLength: 200, description: "Human-readable title (the linkset's `title`); the link type's title when absent." }),
    ),
    lang: t.Optional(
      t.String({
        pattern: LANG_PATTERN,
        description: 'Language of the target, e.g. en or fr-CH (matched against Accept-Language; `hreflang` in the linkset).',
      }),
    ),
  },
  strict,
)
const Links = t.Array(Gs1Link, { maxItems: MAX_PRODUCT_LINKS, description: `Typed links, 0-${MAX_PRODUCT_LINKS}; several of one type differ by lang.` })

export const Gs1Lot = t.Object(
  {
    lot: t.String({ pattern: LOT_PATTERN, description: 'Batch/lot number (GS1 AI 10): 1-20 characters of GS1 character set 82, as printed in /10/<lot>.' }),
    url: t.Optional(Url("Default link for this lot (a recall notice, say); the product's url when absent.")),
    links: t.Optional(Links),
  },
  { ...strict, description: 'Lot-specific overrides: its links come before the product’s.' },
)

export const Gs1Data = t.Object(
  {
    gtin: t.String({
      pattern: GTIN_PATTERN,
      description: 'GTIN-8, -12, -13 or -14 with a valid check digit; stored (and answered) as 14 digits. The link key is this GTIN; one GTIN per domain.',
    }),
    url: Url('Default link of the product (gs1:defaultLink).'),
    links: t.Optional(Links),
    lots: t.Optional(t.Array(Gs1Lot, { maxItems: MAX_LOTS, description: `Lots with their own links, 0-${MAX_LOTS}, unique.` })),
  },
  { ...strict, description: 'A GS1 Digital Link product: the resolver at https://<domain>/01/<gtin> answers for it.' },
)
export type Gs1Data = Static<typeof Gs1Data>
export type Gs1LinkValue = Static<typeof Gs1Link>
