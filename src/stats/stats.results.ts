/**
 * The answer rows of GET /statistics that the dashboard reads too (TypeBox only: it is imported
 * by the browser's code, so it imports nothing of the server).
 */
import { Type as t } from '@sinclair/typebox'

/** With `conversions=true` (contract: "Conversions"): on every row. */
export const ConversionFields = {
  leads: t.Optional(t.Integer({ description: 'conversions=true: leads (eventQuantity summed).' })),
  sales: t.Optional(t.Integer({ description: 'conversions=true: sales.' })),
  saleAmount: t.Optional(
    t.Record(t.String(), t.Integer(), { description: 'conversions=true: currency (ISO 4217, lower-case) → sum of sale amounts in minor units.' }),
  ),
}
export const CountResult = t.Object({ clicks: t.Integer(), scans: t.Integer(), ...ConversionFields })
