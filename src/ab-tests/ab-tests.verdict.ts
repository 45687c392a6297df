/**
 * The statistics of an A/B test (contract: "A/B tests"): conversion rates, the two-sided
 * two-proportion z-test, and the verdict. Pure functions; the service feeds them the counts.
 */
import { TEST_SIGNIFICANCE } from '../links'

/** One variant's counts: visits, and visits with at least one conversion of the goal. */
export interface VariantCounts {
  visits: number
  converted: number
}

export const conversionRate = (v: VariantCounts): number => (v.visits > 0 ? v.converted / v.visits : 0)

/**
 * Standard normal CDF by the complementary error function (W. J. Cody's rational
 * approximation as in Numerical Recipes' erfcc, |error| < 1.2e-7): one function, no dependency.
 */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2
  const t = 1 / (1 + 0.5 * x)
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    )
  return z >= 0 ? 1 - erfc / 2 : erfc / 2
}

/** Two-sided p-value of the pooled two-proportion z-test; 1 when the rates cannot differ (no visits, or pooled rate 0 or 1). */
export function twoProportionPValue(a: VariantCounts, b: VariantCounts): number {
  if (a.visits === 0 || b.visits === 0) return 1
  const pooled = (a.converted + b.converted) / (a.visits + b.visits)
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / a.visits + 1 / b.visits))
  if (se === 0) return 1
  const z = (conversionRate(a) - conversionRate(b)) / se
  return Math.min(1, 2 * (1 - normalCdf(Math.abs(z))))
}

export interface Verdict {
  /** The index of the winning variant, or null (inconclusive). */
  winner: number | null
  /** The largest p-value of the best variant against each other one; null when a variant has no visits. */
  pValue: number | null
}

/**
 * The variant with the highest conversion rate wins when its test against every other gives
 * p < 0.05; `pValue` is the largest of those. Ties for the highest rate: no winner.
 */
export function verdictOf(variants: readonly VariantCounts[]): Verdict {
  if (variants.length < 2 || variants.some((v) => v.visits === 0)) return { winner: null, pValue: null }
  let best = 0
  for (let i = 1; i < variants.length; i++) if (conversionRate(variants[i]!) > conversionRate(variants[best]!)) best = i
  let pValue = 0
  for (let i = 0; i < variants.length; i++) if (i !== best) pValue = Math.max(pValue, twoProportionPValue(variants[best]!, variants[i]!))
  return { winner: pValue < TEST_SIGNIFICANCE ? best : null, pValue }
}
