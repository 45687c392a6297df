/** Values of the links API the dashboard imports too (no imports: it is bundled for the browser). */

/** Link types whose visitors go to an http(s) URL: the only ones that can track conversions (a click id handed over as `sl_id`). */
export const CONVERSION_TYPES: readonly string[] = ['link', 'google-form', 'gs1']
