/** Print-run values as plain data: the request schema is built from them and the dashboard's print-run screen imports them. */
export const MAX_BATCH_LINKS = 10_000
export const BATCH_FORMATS = ['zip-png', 'zip-svg', 'zip-pdf', 'pdf-sheet'] as const
export const PAPERS = { A4: [210, 297], Letter: [215.9, 279.4] } as const
export const CAPTIONS = ['key', 'shortLink', 'none'] as const
/** Sheet defaults and bounds, in mm. */
export const SHEET_MM = {
  codeMm: { min: 10, max: 300, default: 30 },
  marginMm: { min: 0, max: 100, default: 10 },
  gapMm: { min: 0, max: 100, default: 6 },
} as const
