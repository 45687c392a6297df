/** Timestamps in the contract's form: ISO 8601 UTC with milliseconds; null stays null. */
export function toIso(ms: number | null | undefined): string | null {
  return ms == null ? null : new Date(ms).toISOString()
}
