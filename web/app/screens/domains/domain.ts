/** A domain as the API answers it (src/domains/domains.schema.ts), and what its states mean in words. */
export type CnameStatus = 'pending' | 'valid' | 'invalid'
export type SslStatus = 'pending' | 'issuing' | 'active' | 'failed'

export interface DomainRecord {
  slug: string
  destination: string | null
  clicks: number
  cnameStatus: CnameStatus
  /** The host the domain must point at (from the server's configuration). */
  cnameTarget: string
  /** What the last DNS check found, in words; null before the first one. */
  cnameDetail: string | null
  sslStatus: SslStatus
  sslError: string | null
  expiredUrl: string | null
  notFoundUrl: string | null
  assetLinks: string | null
  appleAppSiteAssociation: string | null
  archived: boolean
  isDefault: boolean
  createdAt: string
}

export type Tone = 'ok' | 'bad' | 'wait'

export function cnameWords(d: DomainRecord): { short: string; long: string; tone: Tone } {
  switch (d.cnameStatus) {
    case 'valid':
      return { short: 'DNS connected', long: 'The DNS record points here. Links can use this domain.', tone: 'ok' }
    case 'invalid':
      return {
        short: 'DNS not pointing here',
        long: "The DNS record is missing or points somewhere else. Add the record below; we'll keep checking.",
        tone: 'bad',
      }
    default:
      return { short: 'Checking DNS…', long: "We haven't been able to see the DNS record yet; we'll keep checking.", tone: 'wait' }
  }
}

export function sslWords(d: DomainRecord): { short: string; long: string; tone: Tone } {
  switch (d.sslStatus) {
    case 'active':
      return { short: 'Secure (HTTPS)', long: 'A certificate is in place: visitors get a secure https:// link.', tone: 'ok' }
    case 'issuing':
      return { short: 'Getting certificate…', long: 'The certificate is being issued; this usually takes a minute or two.', tone: 'wait' }
    case 'failed':
      return {
        short: 'Certificate failed',
        long: `The last certificate order failed${d.sslError ? `: ${d.sslError}` : ''}. It is retried automatically; "Check again" retries now.`,
        tone: 'bad',
      }
    default:
      return { short: 'Certificate waiting for DNS', long: 'A certificate is ordered as soon as the DNS record points here.', tone: 'wait' }
  }
}

/** Whether the page should keep asking for news: a check or a certificate order is under way. */
export const isSettling = (d: DomainRecord) =>
  !d.archived && (d.cnameStatus === 'pending' || d.sslStatus === 'issuing' || (d.cnameStatus === 'valid' && d.sslStatus === 'pending'))

// Second-level labels under which registrations sit (co.uk, com.au, ...): a rough rule, no public suffix list.
const SECOND_LEVEL = new Set(['co', 'com', 'net', 'org', 'gov', 'edu', 'ac', 'ne', 'or', 'go'])

/**
 * An apex (registered) domain such as `brand.com` or `brand.co.uk` cannot hold a CNAME record,
 * so it needs A/AAAA records or the DNS provider's ALIAS instead. A guess from the labels.
 */
export function looksLikeApex(slug: string): boolean {
  const labels = slug.split('.')
  if (labels.length <= 2) return true
  return labels.length === 3 && labels[2]!.length === 2 && SECOND_LEVEL.has(labels[1]!)
}

/** The record's name as most DNS providers ask for it: the part before the registered domain (`go` for go.brand.com). */
export function relativeName(slug: string): string {
  const labels = slug.split('.')
  const zoneLabels = labels.length >= 3 && labels.at(-1)!.length === 2 && SECOND_LEVEL.has(labels.at(-2)!) ? 3 : 2
  return labels.length > zoneLabels ? labels.slice(0, labels.length - zoneLabels).join('.') : '@'
}

/** The record as a zone-file line, the exact text to give a DNS provider or IT person. */
export const cnameRecordLine = (d: Pick<DomainRecord, 'slug' | 'cnameTarget'>) => `${d.slug}. CNAME ${d.cnameTarget}.`
