import { Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { parseQuery, queryParameters } from '../shared'
import { CreateDomainBody, DomainParams, DomainRecord, ListDomainsQuery, UpdateDomainBody } from './domains.schema'
import type { DomainService } from './domains.service'
import type { DomainStorePort } from './domains.store'

const errors = errorResponses(400, 401, 403, 404, 422, 429)

const ADMIN_ONLY = 'Admin keys only: members get 403 `forbidden` (domains are shared; members list them and use them for links).'
const DEFAULTS_READ_ONLY = 'Default short domains come from the server configuration (`[domains] defaults`): changing or deleting one answers 403 `forbidden`.'

/** Over either store: every answer may be a promise (Elysia awaits it). */
export function domainRoutes({ domains }: { domains: DomainService<DomainStorePort> }) {
  return new Elysia({ name: 'domains', normalize: false })
    .post('/domains', ({ body, request }) => domains.create(callerOf(request), body), {
      body: CreateDomainBody,
      response: { 200: DomainRecord, ...errors },
      detail: {
        tags: ['Domains'],
        summary: 'Add a custom short domain',
        description: `Responds 200 with the record (\`cnameStatus\` and \`sslStatus\` pending). Point the domain at the service with a CNAME record to the service host (apex domains: the same A/AAAA addresses); the CNAME is checked at once and then with backoff, and when valid a TLS certificate is ordered (ACME HTTP-01, so port 80 must reach the service). Links may use the domain once \`cnameStatus\` is valid. 422 \`parameter_error\` when \`domain\` is not a host name, is an IP address, a default domain, the API host, or already registered, or when a URL or JSON field is malformed. ${ADMIN_ONLY}`,
      },
    })
    .get(
      '/domains',
      async ({ request, set }) => {
        const q = parseQuery(ListDomainsQuery, new URL(request.url).searchParams)
        const { domains: list, total } = await domains.list(callerOf(request), q)
        set.headers['x-total-count'] = String(total)
        return list
      },
      {
        response: { 200: t.Array(DomainRecord), ...errors },
        detail: {
          tags: ['Domains'],
          summary: 'List domains',
          description:
            'Default short domains (`isDefault`, always valid and active) and custom domains; every user sees all of them. Archived domains only with `includeArchived=true`. `X-Total-Count` holds the number of matches before paging.',
          parameters: queryParameters(ListDomainsQuery),
        },
      },
    )
    .get('/domains/:domain', ({ params, request }) => domains.get(callerOf(request), params.domain), {
      params: DomainParams,
      response: { 200: DomainRecord, ...errors },
      detail: { tags: ['Domains'], summary: 'Get a domain', description: 'Archived domains too. Unicode names are accepted and answered in punycode.' },
    })
    .patch('/domains/:domain', ({ params, body, request }) => domains.update(callerOf(request), params.domain, body), {
      params: DomainParams,
      body: UpdateDomainBody,
      response: { 200: DomainRecord, ...errors },
      detail: {
        tags: ['Domains'],
        summary: 'Update a domain',
        description: `Changes the redirect URLs and deep-link files (null clears one), or archives (\`archived: true\`) and un-archives (\`archived: false\`). An archived domain keeps serving its links but takes no new ones. ${ADMIN_ONLY} ${DEFAULTS_READ_ONLY}`,
      },
    })
    .delete('/domains/:domain', ({ params, request }) => domains.remove(callerOf(request), params.domain), {
      params: DomainParams,
      response: { 200: t.Object({ domain: t.String() }), ...errors },
      detail: {
        tags: ['Domains'],
        summary: 'Delete a domain',
        description: `Responds with \`{ domain }\`. The domain stops being served at once: its certificate is dropped and links under it no longer resolve (visitors get the 404 page); the links themselves are kept. ${ADMIN_ONLY} ${DEFAULTS_READ_ONLY}`,
      },
    })
    .post('/domains/:domain/verify', ({ params, request }) => domains.verify(callerOf(request), params.domain), {
      params: DomainParams,
      response: { 200: DomainRecord, ...errors },
      detail: {
        tags: ['Domains'],
        summary: "Check the domain's DNS now",
        description: `Re-checks the CNAME at once and responds with the updated record; when it is valid and no certificate is served yet (or the last order failed), a certificate order starts right away. A temporary DNS failure leaves \`cnameStatus\` as it was. Takes no body. ${ADMIN_ONLY}`,
      },
    })
}
