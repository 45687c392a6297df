/**
 * Link types of the GS1 Web Vocabulary (https://gs1.org/voc/, the `gs1:` prefix) that a
 * product's typed links may carry, each with a short human-readable title (the resolver's
 * linkset must give every link a title; a link without its own gets this one).
 * `gs1:defaultLink` is the product's (or lot's) `url`; `defaultLinkMulti` and `handledBy` are
 * resolver mechanics, not content, and are left out.
 */
export const GS1_NAMESPACE = 'https://gs1.org/voc/'

export const GS1_LINK_TYPE_TITLES = {
  activityIdeas: 'Activity ideas',
  allergenInfo: 'Allergen information',
  brandHomepageClinical: 'Brand information for professionals',
  brandHomepagePatient: 'Brand information for patients',
  careersInfo: 'Careers',
  certificationInfo: 'Certification information',
  consumerHandlingStorageInfo: 'Handling and storage',
  disassemblyInfo: 'Disassembly instructions',
  epcis: 'EPCIS repository',
  epil: 'Electronic patient information leaflet',
  eventsInfo: 'Events',
  faqs: 'Frequently asked questions',
  handlingEndOfLife: 'End-of-life handling',
  hasRetailers: 'Retailers',
  homepage: 'Organisation homepage',
  ingredientsInfo: 'Ingredients',
  instructions: 'Instructions',
  jws: 'JSON Web Signature',
  leaveReview: 'Leave a review',
  locationInfo: 'Location information',
  logisticsInfo: 'Logistics information',
  masterData: 'Master data',
  menuInfo: 'Menu',
  nutritionalInfo: 'Nutritional information',
  openingHoursInfo: 'Opening hours',
  paymentLink: 'Payment',
  pip: 'Product information',
  productPassport: 'Product passport',
  productSustainabilityInfo: 'Product sustainability',
  promotion: 'Promotion',
  purchaseSuppliesOrAccessories: 'Supplies and accessories',
  quickStartGuide: 'Quick start guide',
  recallStatus: 'Recall status',
  recipeInfo: 'Recipes',
  recyclingInfo: 'Recycling',
  registerProduct: 'Register the product',
  registryEntry: 'Registry entry',
  relatedVideo: 'Related video',
  repairInfo: 'Repair',
  reuseInfo: 'Re-use',
  review: 'Reviews',
  safetyInfo: 'Safety information',
  scheduleTime: 'Scheduling and reservations',
  serviceInfo: 'Service and maintenance',
  smartLabel: 'SmartLabel',
  smpc: 'Summary of product characteristics',
  socialMedia: 'Social media',
  sorting: 'Sorting for recycling',
  statisticInfo: 'Statistics',
  support: 'Support',
  sustainabilityInfo: 'Sustainability and recycling',
  traceability: 'Traceability',
  tutorial: 'Tutorial',
  userAgreement: 'User agreement',
  verificationService: 'Verification service',
  whatsInTheBox: "What's in the box",
} as const

/** The link types a product link may name, written `gs1:<name>`. */
export const GS1_LINK_TYPES = Object.keys(GS1_LINK_TYPE_TITLES).map((n) => `gs1:${n}`) as `gs1:${keyof typeof GS1_LINK_TYPE_TITLES}`[]
export type Gs1LinkType = (typeof GS1_LINK_TYPES)[number]

/** The default link's type: the product's or lot's `url`. */
export const DEFAULT_LINK_TYPE = 'gs1:defaultLink'

/** `gs1:pip` → `https://gs1.org/voc/pip`: the relation type a linkset uses. */
export const relationOf = (linkType: string) => `${GS1_NAMESPACE}${linkType.slice(4)}`

/** The title of a link type (`gs1:pip` → "Product information"). */
export function titleOf(linkType: string): string {
  if (linkType === DEFAULT_LINK_TYPE) return 'Default link'
  return (GS1_LINK_TYPE_TITLES as Record<string, string>)[linkType.slice(4)] ?? linkType
}

/**
 * A `linkType` query value as the `gs1:<name>` CURIE: the CURIE itself, or the full URI in any of
 * GS1's namespaces (https://gs1.org/voc/, https://ref.gs1.org/voc/, https://www.gs1.org/voc/, http too).
 */
export function curieOf(value: string): string {
  const m = /^https?:\/\/(?:ref\.|www\.)?gs1\.org\/voc\/([A-Za-z]+)$/.exec(value)
  return m ? `gs1:${m[1]}` : value
}
