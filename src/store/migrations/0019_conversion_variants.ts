import type { Migration } from './index'

/**
 * The A/B variant of a conversion's click (null when the click was outside a test), written with
 * the lead or sale from the click it matched by click id, so a test's conversions are counted per
 * variant without matching URLs (src/ab-tests, ADR 24). It needs `conversions` (0018), so it comes
 * after it, not in 0017.
 */
export const conversionVariants: Migration = {
  id: 19,
  name: '0019_conversion_variants',
  sql: `
ALTER TABLE conversions ADD COLUMN variant INTEGER;
CREATE INDEX conversions_link_variant ON conversions (link_seq, click_at) WHERE variant IS NOT NULL;
`,
}
