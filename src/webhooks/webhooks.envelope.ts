/**
 * The envelope every delivery and every live-stream message carries:
 * `{ "id": "evt_…", "type": "…", "createdAt": iso, "data": {…} }`, built from the stored row
 * without parsing its data, except for link.clicked, whose `link.shortLink` is made here (the
 * click writer has no configuration; the short link's form depends on the public port).
 */
import { toIso } from '../shared'

export type ShortLinkOf = (link: { domain: string; key: string; linkType: string }) => string

export interface StoredEvent {
  id: string
  type: string
  data: string
  created_at: number
}

export function envelopeOf(e: StoredEvent, shortLinkOf: ShortLinkOf): string {
  let data = e.data
  if (e.type === 'link.clicked') {
    const parsed = JSON.parse(data) as { link: { id: string; domain: string; key: string; linkType?: string; destination: string }; click: unknown }
    const { id, domain, key, linkType, destination } = parsed.link
    if (linkType !== undefined) {
      parsed.link = { id, domain, key, shortLink: shortLinkOf({ domain, key, linkType }), destination } as typeof parsed.link
      data = JSON.stringify(parsed)
    }
  }
  return `{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"createdAt":${JSON.stringify(toIso(e.created_at))},"data":${data}}`
}
