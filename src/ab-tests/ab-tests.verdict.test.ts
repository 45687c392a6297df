import { describe, expect, test } from 'bun:test'
import { normalCdf, twoProportionPValue, verdictOf } from './ab-tests.verdict'

describe('the z-test', () => {
  test('normal CDF at known points', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7)
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6)
    expect(normalCdf(-2.575829)).toBeCloseTo(0.005, 6)
  })

  test('two proportions: a textbook case (200/1000 against 250/1000: z = -2.68, p = 0.0074)', () => {
    expect(twoProportionPValue({ visits: 1000, converted: 200 }, { visits: 1000, converted: 250 })).toBeCloseTo(0.0074, 4)
    // Symmetric, and 1 for equal rates or no conversions at all.
    expect(twoProportionPValue({ visits: 1000, converted: 250 }, { visits: 1000, converted: 200 })).toBeCloseTo(0.0074, 4)
    expect(twoProportionPValue({ visits: 500, converted: 50 }, { visits: 800, converted: 80 })).toBeCloseTo(1, 9)
    expect(twoProportionPValue({ visits: 500, converted: 0 }, { visits: 800, converted: 0 })).toBe(1)
  })
})

describe('the verdict', () => {
  test('a clear winner: the variant with the highest rate, significant against every other', () => {
    const v = verdictOf([
      { visits: 1000, converted: 100 },
      { visits: 1000, converted: 160 },
      { visits: 1000, converted: 95 },
    ])
    expect(v.winner).toBe(1)
    expect(v.pValue!).toBeLessThan(0.05)
    // pValue is the largest of the pairwise ones (1 against 0 here).
    expect(v.pValue!).toBeCloseTo(twoProportionPValue({ visits: 1000, converted: 160 }, { visits: 1000, converted: 100 }), 12)
  })

  test('a flat test is inconclusive', () => {
    const v = verdictOf([
      { visits: 1000, converted: 100 },
      { visits: 1000, converted: 108 },
    ])
    expect(v.winner).toBeNull()
    expect(v.pValue!).toBeGreaterThan(0.05)
  })

  test('best against one rival only is not enough: every other must be beaten', () => {
    const v = verdictOf([
      { visits: 1000, converted: 100 },
      { visits: 1000, converted: 160 },
      { visits: 1000, converted: 150 },
    ])
    expect(v.winner).toBeNull()
    expect(v.pValue!).toBeGreaterThan(0.05)
  })

  test('no conversions, or a variant without visits: inconclusive', () => {
    expect(
      verdictOf([
        { visits: 10, converted: 0 },
        { visits: 12, converted: 0 },
      ]),
    ).toEqual({ winner: null, pValue: 1 })
    expect(
      verdictOf([
        { visits: 10, converted: 3 },
        { visits: 0, converted: 0 },
      ]),
    ).toEqual({ winner: null, pValue: null })
  })
})
