/**
 * The A/B test answer (GET /links/{id}/test, served by src/ab-tests), as TypeBox: plain data the dashboard imports.
 */
import { Type as t } from '@sinclair/typebox'
import { TEST_GOALS, TEST_STATUSES } from './links.ab.values'
import { literalUnion } from './links.schema'

export const TestVariantResult = t.Object({
  url: t.String(),
  percentage: t.Integer(),
  clicks: t.Integer({ minimum: 0, description: 'Counted visits sent to this variant since the test started.' }),
  leads: t.Integer({ minimum: 0 }),
  sales: t.Integer({ minimum: 0 }),
  conversionRate: t.Number({
    minimum: 0,
    maximum: 1,
    description: 'Visits of the variant with at least one lead (goal leads) or sale (goal sales) ÷ its visits; 0 without visits.',
  }),
})

export const LinkTestResult = t.Object({
  status: literalUnion(TEST_STATUSES, { description: 'running until judged at completedAt (within 5 seconds); then completed (a winner) or inconclusive.' }),
  goal: literalUnion(TEST_GOALS, { description: 'What counts as a conversion.' }),
  completedAt: t.String({ format: 'date-time', description: 'linkOptions.testCompletedAt.' }),
  winner: t.Union([t.Integer({ minimum: 0 }), t.Null()], { description: 'Index of the winning variant (completed), else null.' }),
  pValue: t.Union([t.Number({ minimum: 0, maximum: 1 }), t.Null()], {
    description:
      'The largest two-sided two-proportion z-test p-value of the best variant against each other one (so far, while running); null while a variant has no visits.',
  }),
  variants: t.Array(TestVariantResult),
})
