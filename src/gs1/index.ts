/** GS1 Digital Link: GTINs, the product data schema, URI syntax, link choice and linksets, the resolver description. Pure; imports shared only. Other modules import this file only. */
export { checkDigitOf, GTIN_LENGTHS, gtin14, gtinProblem } from './gs1.gtin'
export { byLanguage, chooseLink, type Gs1Choice, type Gs1Product, linksetOf, productOf } from './gs1.product'
export { LINKSET_CONTEXT_HEADER, LINKSET_MEDIA_TYPE, linksetLinkHeader, resolverDescription, wantsLinkset } from './gs1.resolver'
export { GTIN_PATTERN, LANG_PATTERN, LOT_PATTERN, MAX_LOTS, MAX_PRODUCT_LINKS } from './gs1.rules'
export { Gs1Data, Gs1Link } from './gs1.schema'
export { type Gs1Request, isGs1Path, parseGs1Path } from './gs1.uri'
export { DEFAULT_LINK_TYPE, GS1_LINK_TYPE_TITLES, GS1_LINK_TYPES, titleOf } from './gs1.vocabulary'
