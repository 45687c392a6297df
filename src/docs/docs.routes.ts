/**
 * `<baseUrl>/openapi.json` generated from the route schemas, and `<baseUrl>/docs`, a
 * Swagger UI page whose assets are embedded in the binary so it renders offline.
 */

import { toOpenAPISchema } from '@elysiajs/openapi/openapi'
import { Elysia } from 'elysia'
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import pkg from '../../package.json'
import type { Settings } from '../config'
import { STATUS_BY_CODE } from '../shared'

export const PUBLIC_DOC_PATHS = ['/openapi.json', '/docs']

const API_DESCRIPTION = `Short links with QR codes, tags, branded domains, files, QR templates and click statistics.

**Authentication**: every operation needs \`Authorization: Bearer <API key>\`. Keys are created by the operator
(\`shortlink keys create --user ID --role admin|member|readonly\`) or through \`POST /keys\`, and shown once. \`readonly\` keys may only GET;
\`member\` keys act on their own links, tags and files; \`admin\` keys on everyone's. A key acts with the lower of its own
role and its user's current role (demoting a user demotes its keys and sessions within a second, on every node). A revoked
key, or a disabled or deleted user's key, answers 401 within a second.
The dashboard (\`/app/\` on this host) signs in through \`POST /session\` instead and sends the \`__Host-shortlink_session\`
cookie (HttpOnly, Secure, SameSite=Strict) with no Authorization header; such requests act with the session's user and role,
and every write made with the cookie must carry the server's \`Origin\` and \`X-CSRF-Token\` (from \`GET /session\`), else 403.

**Errors** have the body \`{ "code", "message" }\` (plus \`requestId\`). Status per code:
${Object.entries(STATUS_BY_CODE)
  .map(([c, s]) => `\`${c}\` ${s}`)
  .join(', ')}. Bodies that are not JSON, have the wrong content type or are too large, and requests whose \`Host\` is not a valid
host[:port] (or whose path has a malformed percent-escape), are \`bad_request\`;
a value breaking a rule is \`parameter_error\` naming the field (a NUL, \`%00\` or \`\\u0000\`, in any query value or JSON string
among them; in the path it is \`bad_request\`); unknown body fields are \`parameter_error\`;
unknown query parameters are ignored.

**Headers**: every answer carries \`X-Content-Type-Options: nosniff\` and \`Cache-Control: no-store\` (errors too), and may not
be framed (\`Content-Security-Policy: frame-ancestors 'none'\`, \`X-Frame-Options: DENY\`).

**Rate limits**: every response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds);
over the limit the answer is 429 \`rate_limit_exceeded\` with \`Retry-After\`. On a cluster (\`[store] url\` names
PostgreSQL) limits hold for the whole cluster, in windows aligned on the minute.

**Store unavailable** (cluster only): while PostgreSQL cannot be reached, any operation may answer 503
\`service_unavailable\` with \`Retry-After\`; short links already in a node's cache keep redirecting, and visits are
kept in memory and written when it is back.

**Conventions**: timestamps are ISO 8601 UTC with milliseconds; identifiers are opaque with a type prefix
(\`lnk_\`, \`tag_\`, \`fil_\`, \`tpl_\`, \`usr_\`, \`key_\`); array query filters repeat the name (\`ids=a&ids=b\`);
list endpoints page with \`page\` (from 1) and \`pageSize\`; list endpoints answering an array put the number of matches
before paging in \`X-Total-Count\`. Creation answers 200 with the record (upsert answers 201 when it creates).

**Short links** (not part of this API, on each short domain): \`GET https://<domain>/<key>\` answers 302 to the
resolved URL. Order: unknown or deleted key → the domain's notFoundUrl, else a 404 page; expired → expiration.url,
else the domain's expiredUrl, else a 410 page; link-preview bots (Facebook, Slack, WhatsApp…) → a page with og:/twitter:
tags from previewData, not counted; password → a form (200; a wrong password 403) whose POST sets a one-hour cookie scoped to the link; wrong
guesses are limited to 10 per IP (IPv6 /64) and link and 100 per link, per 15 minutes, then 429 with Retry-After; hosted types (text, wi-fi, menu, document, file, image, audio, video, svg, app-stores) →
a landing page at the short link, their files at \`/<key>/file/<fileId>\` behind the same checks; otherwise targeting,
then the A/B test (\`linkOptions.testVariants\`: until \`testCompletedAt\`, a counted visit no targeting item caught goes
to a variant drawn by percentage, and the cookie \`sl_variant\` keeps the visitor on it; see \`GET /links/{id}/test\`),
then health (a resolved URL that is broken, see \`health\` on the link, is replaced by \`linkOptions.healthFallbackUrl\`
when the link has one; the visit still counts), then the visitor's query fills parameters the target lacks and the
link's utm values set or override theirs.
\`?qr=1\` marks a scan and is dropped. Other bots are redirected and not counted. A click reaches \`clicks\` and the
statistics within about a second (one flush window); a crash loses at most that window.`

interface Operation {
  parameters?: { name: string; in: string; schema?: { 'x-documented-name'?: string } }[]
}

/**
 * The router wants one parameter name per place in a method's tree (POST /links/{type} and
 * POST /links/{id}/health share theirs): a path parameter whose schema carries
 * `x-documented-name` is documented under that name, in the path and in its operations.
 */
function withDocumentedNames(path: string, item: Record<string, Operation>): [string, Record<string, Operation>] {
  let documented = path
  for (const op of Object.values(item))
    for (const p of op.parameters ?? []) {
      const name = p.in === 'path' ? p.schema?.['x-documented-name'] : undefined
      if (!name) continue
      documented = documented.replace(`{${p.name}}`, `{${name}}`)
      p.name = name
      delete p.schema!['x-documented-name']
    }
  return [documented, item]
}

/**
 * A body-less answer (a `t.Void()` response, e.g. GET /session's 204) comes out of the
 * generator as `content: { type: 'void' }`, which is not a map of media types: such a
 * response has no `content` at all.
 */
function withoutBodylessContent(item: unknown): unknown {
  for (const operation of Object.values((item ?? {}) as Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>))
    for (const response of Object.values(operation?.responses ?? {}))
      if (response?.content && Object.values(response.content).some((media) => typeof media !== 'object' || media === null)) delete response.content
  return item
}

type Parameter = { name: string; in: string }

/**
 * The generator replaces a route's declared `detail.parameters` (its query string, described
 * from the schema that validates it) with the path parameters whenever the path has any, so
 * GET /qr/{linkId} lost `format` and `width`: they are put back beside the path's.
 */
function keepDeclaredParameters(paths: Record<string, unknown>, api: AnyElysia) {
  for (const route of api.routes as { method: string; path: string; hooks?: { detail?: { parameters?: Parameter[] } } }[]) {
    const declared = route.hooks?.detail?.parameters
    if (!declared?.length) continue
    const path = route.path.replace(/:([^/]+)/g, '{$1}')
    const operation = (paths[path] as Record<string, { parameters?: Parameter[] }> | undefined)?.[route.method.toLowerCase()]
    if (!operation) continue
    const have = operation.parameters ?? []
    operation.parameters = [...have, ...declared.filter((d) => !have.some((p) => p.name === d.name && p.in === d.in))]
  }
}

/** The API app whatever its routes: Elysia's type parameters describe them, which the docs do not need. */
// biome-ignore lint/suspicious/noExplicitAny: any route set
export type AnyElysia = Elysia<any, any, any, any, any, any, any>

export function docsRoutes(settings: Pick<Settings, 'apiPrefix' | 'baseUrl'>, api: AnyElysia) {
  const prefix = settings.apiPrefix
  let cached: string | null = null

  const document = () => {
    if (cached) return cached
    // biome-ignore lint/suspicious/noExplicitAny: toOpenAPISchema's parameter is typed for a fresh Elysia instance
    const generated = toOpenAPISchema(api as any, { staticFile: true }, undefined, undefined, '3.1.0')
    keepDeclaredParameters(generated.paths ?? {}, api)
    const paths: Record<string, unknown> = {}
    for (const [path, item] of Object.entries(generated.paths ?? {})) {
      if (path.startsWith(`${prefix}/docs`) || path === `${prefix}/openapi.json`) continue
      const [documented, operations] = withDocumentedNames(path.slice(prefix.length) || '/', withoutBodylessContent(item) as Record<string, Operation>)
      paths[documented] = operations
    }
    cached = JSON.stringify({
      openapi: '3.1.0',
      info: { title: 'shortlink API', version: pkg.version, description: API_DESCRIPTION },
      servers: [{ url: settings.baseUrl }],
      security: [{ bearer: [] }, { session: [] }],
      tags: [
        { name: 'Links' },
        { name: 'Tags' },
        { name: 'Domains' },
        { name: 'Files' },
        { name: 'QR' },
        { name: 'QR templates' },
        { name: 'Statistics' },
        {
          name: 'Conversions',
          description:
            "Leads and sales reported by a site's server against the click id (`sl_id`) a link with `trackConversion` hands its landing page; Dub's request and answer shapes. How a site passes `sl_id` along: docs/conversions.md.",
        },
        { name: 'Keys and users' },
        { name: 'Dashboard session' },
        { name: 'Webhooks and events' },
      ],
      paths,
      components: {
        ...(generated.components ?? {}),
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API key.' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: '__Host-shortlink_session',
            description: 'The dashboard session set by POST /session; writes also need Origin and X-CSRF-Token.',
          },
        },
      },
    })
    return cached
  }

  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>shortlink API</title><link rel="stylesheet" href="${prefix}/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div><script src="${prefix}/docs/swagger-ui-bundle.js"></script>
<script src="${prefix}/docs/init.js"></script></body></html>`
  const init = `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(`${prefix}/openapi.json`)}, dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true });`

  return new Elysia({ name: 'docs' })
    .get('/openapi.json', () => new Response(document(), { headers: { 'content-type': 'application/json; charset=utf-8' } }), {
      detail: { hide: true },
    })
    .get('/docs', () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { detail: { hide: true } })
    .get('/docs/init.js', () => new Response(init, { headers: { 'content-type': 'text/javascript' } }), { detail: { hide: true } })
    .get('/docs/swagger-ui-bundle.js', () => new Response(Bun.file(swaggerBundle), { headers: { 'content-type': 'text/javascript' } }), {
      detail: { hide: true },
    })
    .get('/docs/swagger-ui.css', () => new Response(Bun.file(swaggerCss), { headers: { 'content-type': 'text/css' } }), {
      detail: { hide: true },
    })
}
