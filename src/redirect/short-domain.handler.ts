/**
 * Requests to a short domain that are not API calls. The redirect server proper
 * (resolve, click capture) plugs in here; what the foundation answers is the part
 * that needs no store lookup.
 */
import type { Settings } from '../config/settings'
import notFoundHtml from '../../web/pages/not-found.html' with { type: 'text' }

// Imported as text; Bun's types describe .html imports as HTML bundles.
const NOT_FOUND_PAGE = notFoundHtml as unknown as string

export function createShortDomainHandler(settings: Settings) {
  const html = { 'content-type': 'text/html; charset=utf-8' }
  return async (request: Request, url: URL): Promise<Response> => {
    if (url.pathname === '/robots.txt') return new Response('User-agent: *\nDisallow: /\n', { headers: { 'content-type': 'text/plain' } })
    if (url.pathname === '/favicon.ico') return new Response(null, { status: 204 })
    if (url.pathname === '/') return Response.redirect(`${settings.baseUrl}/docs`, 302)
    return new Response(NOT_FOUND_PAGE, { status: 404, headers: html })
  }
}
