/**
 * GTINs (GS1 General Specifications 3.3.2 and 7.9): 8, 12, 13 or 14 digits whose last digit is
 * the standard mod-10 check digit. Every length is the same number written with leading zeros
 * dropped, so a GTIN is stored and matched in its 14-digit form.
 */

/** The check digit of `body` (the digits before it): weights 3, 1, 3, … from the right. */
export function checkDigitOf(body: string): number {
  let sum = 0
  for (let i = body.length - 1, w = 3; i >= 0; i--, w = 4 - w) sum += (body.charCodeAt(i) - 48) * w
  return (10 - (sum % 10)) % 10
}

export const GTIN_LENGTHS = [8, 12, 13, 14] as const

/** Why `raw` is not a GTIN, or null when it is one. */
export function gtinProblem(raw: string): string | null {
  if (!/^[0-9]+$/.test(raw)) return 'must be digits only'
  if (!(GTIN_LENGTHS as readonly number[]).includes(raw.length)) return `must have 8, 12, 13 or 14 digits (got ${raw.length})`
  const expected = checkDigitOf(raw.slice(0, -1))
  if (raw.charCodeAt(raw.length - 1) - 48 !== expected) return `has a wrong check digit (expected ${expected} as the last digit)`
  return null
}

/** A valid GTIN of any length as its 14-digit form; null when it is not a valid GTIN. */
export function gtin14(raw: string): string | null {
  return gtinProblem(raw) === null ? raw.padStart(14, '0') : null
}
