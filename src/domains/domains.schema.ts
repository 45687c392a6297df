import { type TSchema, Type as t } from '@sinclair/typebox'
import { PlainText, pagingQuery, sortOrderQuery } from '../shared'

const nullable = <T extends TSchema>(s: T) => t.Union([s, t.Null()])
const Url = (description: string) =>
  t.String({ minLength: 1, maxLength: 2000, description: `${description} An absolute http or https URL, 1-2000 characters.` })
const JsonText = (description: string) =>
  t.String({ minLength: 1, maxLength: 2000, description: `${description} A JSON object or array as text, 1-2000 characters.` })

const fields = {
  destination: Url('Where the bare domain (`https://<domain>/`) redirects.'),
  notFoundUrl: Url('Redirect target when a link under this domain does not exist (or was deleted); a 404 page when unset.'),
  expiredUrl: Url('Redirect target when a link under this domain has expired and has no `expiration.url` of its own; a 410 page when unset.'),
  assetLinks: JsonText('Served as `https://<domain>/.well-known/assetlinks.json` (Android App Links).'),
  appleAppSiteAssociation: JsonText('Served as `https://<domain>/.well-known/apple-app-site-association` (iOS Universal Links).'),
}

export const CNAME_STATUSES = ['pending', 'valid', 'invalid'] as const
export const SSL_STATUSES = ['pending', 'issuing', 'active', 'failed'] as const
export type CnameStatus = (typeof CNAME_STATUSES)[number]
export type SslStatus = (typeof SSL_STATUSES)[number]

export const DomainRecord = t.Object({
  slug: t.String({ description: 'The domain name, lower-case punycode.' }),
  destination: nullable(t.String({ description: 'Where the bare domain redirects.' })),
  clicks: t.Integer({ description: 'Clicks on links under this domain.' }),
  cnameStatus: t.Union([t.Literal('pending'), t.Literal('valid'), t.Literal('invalid')], {
    description:
      "pending: not checked yet, or DNS answered with a temporary error (re-checked with backoff); valid: the name CNAMEs (possibly over several hops) to the service host, or, for apex names, has only the service host's addresses; invalid: it points elsewhere or has no records (re-checked with backoff, or now with POST /domains/{domain}/verify).",
  }),
  sslStatus: t.Union([t.Literal('pending'), t.Literal('issuing'), t.Literal('active'), t.Literal('failed')], {
    description:
      'pending: waiting for a valid CNAME; issuing: a certificate is being ordered (ACME HTTP-01); active: a certificate is served; failed: the last order failed (see sslError), retried with backoff.',
  }),
  cnameTarget: t.String({
    description:
      "The host this domain must point at: create a CNAME record from the domain to it (an apex domain, which cannot hold a CNAME: A/AAAA records with the same addresses, or the DNS provider's ALIAS/flattening). From the configuration (`[domains] cnameTarget`, else the API host).",
  }),
  cnameDetail: nullable(
    t.String({ description: 'What the last CNAME check found, in words (e.g. which host the name points at instead); null before the first check.' }),
  ),
  sslError: nullable(t.String({ description: 'Why the last certificate order failed; null when it did not.' })),
  expiredUrl: nullable(t.String()),
  notFoundUrl: nullable(t.String()),
  assetLinks: nullable(t.String()),
  appleAppSiteAssociation: nullable(t.String()),
  archived: t.Boolean({ description: 'Archived domains stay served but take no new links and are hidden from the list unless includeArchived.' }),
  isDefault: t.Boolean({ description: 'A default short domain from the server configuration: always valid and active, read-only here.' }),
  createdAt: t.String({ format: 'date-time', description: 'For default domains: when the store was created.' }),
})

export const CreateDomainBody = t.Object(
  {
    domain: t.String({
      minLength: 1,
      maxLength: 190,
      description: 'Host name, 1-190 characters; Unicode (IDN) names are stored as punycode. Not an IP address, a default domain or the API host.',
    }),
    destination: t.Optional(fields.destination),
    notFoundUrl: t.Optional(fields.notFoundUrl),
    expiredUrl: t.Optional(fields.expiredUrl),
    assetLinks: t.Optional(fields.assetLinks),
    appleAppSiteAssociation: t.Optional(fields.appleAppSiteAssociation),
  },
  { additionalProperties: false },
)

export const UpdateDomainBody = t.Object(
  {
    destination: t.Optional(nullable(fields.destination)),
    notFoundUrl: t.Optional(nullable(fields.notFoundUrl)),
    expiredUrl: t.Optional(nullable(fields.expiredUrl)),
    assetLinks: t.Optional(nullable(fields.assetLinks)),
    appleAppSiteAssociation: t.Optional(nullable(fields.appleAppSiteAssociation)),
    archived: t.Optional(t.Boolean({ description: 'true archives, false un-archives.' })),
  },
  { additionalProperties: false, description: 'An absent field is unchanged; null clears it.' },
)

export const ListDomainsQuery = t.Object({
  domains: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 253 }), { maxItems: 100, description: 'Domain names (repeated); Unicode or punycode.' })),
  search: t.Optional(PlainText({ minLength: 1, maxLength: 190, description: 'Case-insensitive substring of the domain name.' })),
  includeArchived: t.Optional(t.Boolean({ default: false, description: 'Include archived domains.' })),
  sortBy: t.Optional(t.Union([t.Literal('created_at'), t.Literal('domain')], { default: 'created_at', description: 'Sort field.' })),
  sortOrder: sortOrderQuery(),
  ...pagingQuery(50),
})

export const DomainParams = t.Object({ domain: t.String({ minLength: 1, maxLength: 253, description: 'The domain name (Unicode or punycode).' }) })
