import { Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { hasHealth, LinkHealthSchema, type LinkRow, type LinkService } from '../links'
import { AppError, parameterError } from '../shared'
import type { LinkHealthService } from './link-health.service'

/**
 * The link id sits where POST /links/{type} has its type: the router needs one name per place
 * in a method's tree, so it is named `type` here and documented as `{id}`.
 */
const IdParams = t.Object({ type: t.String({ minLength: 1, maxLength: 100, description: 'The link id (lnk_…).', 'x-documented-name': 'id' }) })

interface Links {
  get: LinkService['get']
  findLiveRow(domain: string, key: string): LinkRow | null | Promise<LinkRow | null>
}

export function linkHealthRoutes({ links, linkHealth }: { links: Links; linkHealth: LinkHealthService }) {
  return new Elysia({ name: 'link-health', normalize: false }).post(
    '/links/:type/health',
    async ({ params, request }) => {
      // The link's owner rules, as for its other writes (404 / 410 / 403); readonly keys never get here (POST).
      const link = await links.get(callerOf(request), params.type)
      if (!hasHealth(link.linkType)) throw parameterError(`link ${link.id} is a ${link.linkType} link: only link, google-form and gs1 links have health`)
      const row = await links.findLiveRow(link.domain, link.key)
      if (!row) throw new AppError('record_gone', `link ${link.id} was deleted`)
      return (await linkHealth.checkNow(row))!
    },
    {
      params: IdParams,
      response: { 200: LinkHealthSchema, ...errorResponses(400, 401, 403, 404, 410, 422, 429, 500) },
      detail: {
        tags: ['Links'],
        summary: "Check a link's destinations now",
        description:
          "Checks every URL of the link now (its destination and targeting URLs; HEAD, then GET on 405/501, redirects followed under the private-address rules of POST /qr/scan) and answers its `health` with each URL's answer. Each check counts toward the link's status like a scheduled one (broken after 2 failures in a row, ok after a pass). Answers within twice `[health] timeout`; a check still running then is recorded when it ends. Owner rules as for other writes to the link: members their own links, admins any; readonly keys get `forbidden` (a check is a write: it may change the link's status). Links without a URL destination (types other than link, google-form, gs1) are 422.",
      },
    },
  )
}
