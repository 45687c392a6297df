import type { Visit } from './click-recorder'

/** A visit to link `linkSeq` at `at` from its own referer page `i`: each one a row of its own. */
export const visitFromPage = (linkSeq: number, at: number, i: number): Visit => ({
  linkSeq,
  domain: 'localhost',
  at,
  scan: false,
  referer: 'ref.example',
  refererUrl: `https://ref.example/${i}`,
  visitor: { id: 1, os: 'IOS', browser: 'Safari', device: 'Mobile' },
  geo: { id: 0, continent: null, country: null, region: null, city: null },
  utm: { id: 0, source: null, medium: null, campaign: null, term: null, content: null },
})
