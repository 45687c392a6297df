/**
 * The limits and patterns of a GS1 product's data, as plain values: the TypeBox schema
 * (gs1.schema.ts) is built from them and the dashboard's GS1 form imports them (no schema library
 * in the browser bundle).
 */

/** Characters a GS1 AI value may hold (GS1 AI encodable character set 82), for a regex class. */
export const CSET82 = `!"%&'()*+,./0-9:;<=>?A-Z_a-z-`
/** Batch/lot (AI 10): 1-20 characters of CSET 82. */
export const LOT_PATTERN = `^[${CSET82}]{1,20}$`
export const GTIN_PATTERN = '^([0-9]{8}|[0-9]{12,14})$'
export const MAX_PRODUCT_LINKS = 50
export const MAX_LOTS = 1000
/** hreflang as GS1's linkset schema allows it: a language, optionally with a region. */
export const LANG_PATTERN = '^[A-Za-z]{2}(-[A-Za-z]{2})?$'
