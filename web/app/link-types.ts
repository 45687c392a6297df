/** The link types a link can be created as (the API's `POST /links/{type}`), in the order the dashboard offers them. */
export const LINK_TYPES = [
  'link',
  'document',
  'file',
  'google-form',
  'menu',
  'app-stores',
  'image',
  'audio',
  'video',
  'wi-fi',
  'email',
  'map',
  'whatsapp',
  'text',
  'sms',
  'svg',
  'gs1',
] as const
export type LinkType = (typeof LINK_TYPES)[number]
export const isLinkType = (s: string | null | undefined): s is LinkType => (LINK_TYPES as readonly string[]).includes(s ?? '')

/** Every value the API's `linkType` filter takes: the create types plus kinds other services have (they match nothing here). */
export const FILTER_LINK_TYPES = [
  'link',
  'document',
  'file',
  'vcard',
  'landing-page',
  'google-form',
  'menu',
  'app-stores',
  'image',
  'audio',
  'video',
  'wi-fi',
  'email',
  'map',
  'whatsapp',
  'text',
  'sms',
  'svg',
  'code',
  'gs1',
] as const
