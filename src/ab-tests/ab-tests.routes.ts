import { Type as t } from '@sinclair/typebox'
import { Elysia } from 'elysia'
import { callerOf } from '../auth'
import { errorResponses } from '../docs'
import { LinkTestResult } from '../links'
import type { AbTests } from './ab-tests.service'

export function abTestRoutes({ abTests }: { abTests: AbTests }) {
  return new Elysia({ name: 'ab-tests', normalize: false }).get('/links/:id/test', ({ params, request }) => abTests.results(callerOf(request), params.id), {
    params: t.Object({ id: t.String({ minLength: 1, maxLength: 100, description: 'The link id (lnk_…).' }) }),
    response: { 200: LinkTestResult, ...errorResponses(400, 401, 403, 404, 410, 429, 500) },
    detail: {
      tags: ['Links'],
      summary: "A link's A/B test",
      description:
        "The A/B test of `linkOptions.testVariants`: per variant its counted visits (`clicks`), leads, sales and `conversionRate` (visits with at least one lead, or sale for goal `sales`, ÷ visits), counted since the variants were set. While `running`, `pValue` is the test so far; at `testCompletedAt` (within 5 seconds, one node in a cluster) the variant with the highest rate wins when a two-sided two-proportion z-test against every other variant gives p < 0.05 (`pValue`: the largest of those): its URL becomes the link's (`link.updated`), status `completed`; otherwise `inconclusive`. Either way `link.test_completed` goes out and the split stops; the counts shown are then those the verdict was taken on. `not_found` for a link without a test. Read rights as for the link.",
    },
  })
}
