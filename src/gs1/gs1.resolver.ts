/**
 * The resolver's HTTP vocabulary: the resolver description file (`/.well-known/gs1resolver`),
 * the Link header values and the media types the GS1-Conformant Resolver standard names.
 */
import { GS1_LINK_TYPE_TITLES, GS1_NAMESPACE } from './gs1.vocabulary'

export const LINKSET_MEDIA_TYPE = 'application/linkset+json'
/** GS1's JSON-LD context for linksets (resolver standard 1.2.0 artefacts). */
export const LINKSET_CONTEXT = 'https://ref.gs1.org/standards/resolver/linkset-context'

/** Link header of a redirect or 404: where the linkset of the request URI is. */
export function linksetLinkHeader(origin: string, canonicalPath: string): string {
  return `<${origin}${canonicalPath}?linkType=linkset>; rel="linkset"; type="${LINKSET_MEDIA_TYPE}"`
}

/** Link header of a linkset answer: its JSON-LD context (turns the JSON into JSON-LD). */
export const LINKSET_CONTEXT_HEADER = `<${LINKSET_CONTEXT}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`

/** `Accept` asks for a linkset (application/linkset+json, or JSON in general). */
export function wantsLinkset(accept: string | null): boolean {
  if (!accept) return false
  return accept.includes(LINKSET_MEDIA_TYPE) || /(^|[\s,])application\/json\b/.test(accept)
}

/** The resolver description file of a short domain. */
export function resolverDescription(origin: string, name: string) {
  return {
    name,
    resolverRoot: origin,
    supportedPrimaryKeys: ['01'],
    supportedLinkType: [{ namespace: GS1_NAMESPACE, prefix: 'gs1:' }],
    linkTypeDefaultCanBeLinkset: false,
    supportsLanguageVariants: true,
    validatesAIcombinations: true,
    jsonLdContextLocation: LINKSET_CONTEXT,
    activeLinkTypes: Object.fromEntries(Object.entries(GS1_LINK_TYPE_TITLES).map(([k, title]) => [`gs1:${k}`, { title, url: `${GS1_NAMESPACE}${k}` }])),
  }
}
