/**
 * The link types as the editor sees them: a card for the picker, the form state each
 * type starts with, and the conversions between that state and the API's `data`
 * (contract: Links, "data per type"). Form state keeps strings as typed; `dataOf`
 * trims and drops empty optional fields so the API's own rules judge what is left.
 */

import { isLinkType, LINK_TYPES, type LinkType } from '../../link-types'
import { emptyGs1, type Gs1Form, gs1DataOf, gs1FormOf } from './gs1-model'

export { isLinkType, LINK_TYPES, type LinkType }

export interface TypeInfo {
  label: string
  /** One line on the picker card. */
  description: string
  /** A short badge (no emoji: not every system has an emoji font). */
  icon: string
}

export const TYPE_INFO: Record<LinkType, TypeInfo> = {
  link: { label: 'Website', description: 'Send people to any web page.', icon: 'URL' },
  'google-form': { label: 'Google Form', description: 'Open a survey or sign-up form.', icon: 'FORM' },
  menu: { label: 'Menu', description: 'A restaurant menu: sections, dishes and prices, or a PDF.', icon: 'MENU' },
  text: { label: 'Text', description: 'A short page of text: a note, opening hours, instructions.', icon: 'TXT' },
  'wi-fi': { label: 'Wi-Fi', description: 'Guests join your network by scanning.', icon: 'WIFI' },
  email: { label: 'Email', description: 'Open a pre-filled email to you.', icon: '@' },
  sms: { label: 'SMS', description: 'Open a pre-filled text message.', icon: 'SMS' },
  whatsapp: { label: 'WhatsApp', description: 'Start a WhatsApp chat with a first message.', icon: 'WA' },
  map: { label: 'Map', description: 'Show a place or address on a map.', icon: 'MAP' },
  'app-stores': { label: 'App stores', description: 'One link to your app on the App Store and Google Play.', icon: 'APP' },
  document: { label: 'Document', description: 'Share a PDF: brochure, price list, manual.', icon: 'PDF' },
  image: { label: 'Image', description: 'Show a picture: a poster, a flyer, a photo.', icon: 'IMG' },
  video: { label: 'Video', description: 'Play a video in the browser.', icon: 'VID' },
  audio: { label: 'Audio', description: 'Play a sound file: a podcast, a message, music.', icon: 'AUD' },
  svg: { label: 'SVG', description: 'Show a vector graphic (SVG).', icon: 'SVG' },
  file: { label: 'File', description: 'Offer any stored file for download.', icon: 'FILE' },
  gs1: { label: 'GS1 product', description: 'Packaging: one code for the till (GTIN) and the phone.', icon: 'GTIN' },
}

/** The order of the picker: the everyday types first. */
export const PICKER_ORDER: LinkType[] = [
  'link',
  'menu',
  'wi-fi',
  'text',
  'document',
  'image',
  'video',
  'audio',
  'email',
  'sms',
  'whatsapp',
  'map',
  'app-stores',
  'google-form',
  'svg',
  'file',
  'gs1',
]

/** Types whose content is an uploaded file (or a URL to one). */
export const FILE_TYPES = new Set<LinkType>(['document', 'file', 'image', 'audio', 'video', 'svg'])
/** Extensions (as the files API names them) each file type accepts; null: any. */
export const FILE_EXTENSIONS: Record<string, string[] | null> = {
  document: ['pdf'],
  image: ['png', 'jpg', 'gif', 'webp', 'svg'],
  audio: ['mp3', 'ogg', 'wav', 'm4a'],
  video: ['mp4', 'webm'],
  svg: ['svg'],
  file: null,
  menu: ['pdf', 'png', 'jpg', 'webp'],
}
export const acceptOf = (type: string) =>
  FILE_EXTENSIONS[type]
    ?.map((e) => `.${e}`)
    .concat(type === 'image' || type === 'menu' ? ['.jpeg'] : [])
    .join(',')
/** Types whose destination is a URL the user types (the UTM builder edits its query). */
export const URL_TYPES = new Set<LinkType>(['link', 'google-form'])

export interface MenuItem {
  name: string
  description: string
  price: string
}
export interface MenuSection {
  name: string
  items: MenuItem[]
}
export type Source = 'file' | 'url' | 'sections'

/** Every field any type uses, as typed; each type reads the ones it needs. */
export interface ContentForm {
  url: string
  title: string
  source: Source
  fileId: string
  fileName: string
  sections: MenuSection[]
  ios: string
  android: string
  fallbackUrl: string
  ssid: string
  password: string
  encryption: 'WPA' | 'WEP' | 'nopass'
  hidden: boolean
  to: string
  subject: string
  body: string
  phone: string
  message: string
  place: 'query' | 'coordinates'
  query: string
  latitude: string
  longitude: string
  text: string
  /** GS1 products (gs1-model.ts). */
  gs1: Gs1Form
}

export const emptyItem = (): MenuItem => ({ name: '', description: '', price: '' })
export const emptySection = (): MenuSection => ({ name: '', items: [emptyItem()] })

export function emptyContent(type: LinkType): ContentForm {
  return {
    url: '',
    title: '',
    source: type === 'menu' ? 'sections' : 'file',
    fileId: '',
    fileName: '',
    sections: [{ name: 'Starters', items: [emptyItem()] }],
    ios: '',
    android: '',
    fallbackUrl: '',
    ssid: '',
    password: '',
    encryption: 'WPA',
    hidden: false,
    to: '',
    subject: '',
    body: '',
    phone: '',
    message: '',
    gs1: emptyGs1(),
    place: 'query',
    query: '',
    latitude: '',
    longitude: '',
    text: '',
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the API's data is one of sixteen shapes, read field by field
export type ApiData = Record<string, any>

const opt = (s: string) => (s.trim() === '' ? undefined : s.trim())
const num = (s: string) => (s.trim() === '' ? undefined : Number(s.trim()))
/** Drops undefined fields so the body carries only what the user filled in. */
const compact = (o: ApiData): ApiData => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

/** The API's `data` for a type from the form. */
export function dataOf(type: LinkType, f: ContentForm): ApiData {
  switch (type) {
    case 'link':
    case 'google-form':
      return { url: f.url.trim() }
    case 'document':
    case 'file':
    case 'image':
    case 'audio':
    case 'video':
    case 'svg':
      return compact({
        fileId: f.source === 'file' ? f.fileId || undefined : undefined,
        url: f.source === 'url' ? f.url.trim() : undefined,
        title: opt(f.title),
      })
    case 'menu':
      return compact({
        title: opt(f.title),
        fileId: f.source === 'file' ? f.fileId || undefined : undefined,
        url: f.source === 'url' ? f.url.trim() : undefined,
        sections:
          f.source === 'sections'
            ? f.sections.map((s) => ({
                name: s.name.trim(),
                items: s.items
                  .filter((i) => i.name.trim() || i.price.trim() || i.description.trim())
                  .map((i) => compact({ name: i.name.trim(), price: opt(i.price), description: opt(i.description) })),
              }))
            : undefined,
      })
    case 'app-stores':
      return compact({ ios: opt(f.ios), android: opt(f.android), fallbackUrl: opt(f.fallbackUrl), title: opt(f.title) })
    case 'wi-fi':
      return { ssid: f.ssid, password: f.encryption === 'nopass' ? '' : f.password, encryption: f.encryption, hidden: f.hidden }
    case 'email':
      return compact({ to: f.to.trim(), subject: opt(f.subject), body: opt(f.body) })
    case 'sms':
    case 'whatsapp':
      return compact({ phone: f.phone.trim(), message: opt(f.message) })
    case 'map':
      return f.place === 'query' ? { query: f.query.trim() } : compact({ latitude: num(f.latitude), longitude: num(f.longitude) })
    case 'text':
      return compact({ text: f.text, title: opt(f.title) })
    case 'gs1':
      return gs1DataOf(f.gs1)
  }
}

/** The form for a stored link's `data`. */
export function contentOf(type: LinkType, d: ApiData): ContentForm {
  const f = emptyContent(type)
  const s = (v: unknown) => (v === undefined || v === null ? '' : String(v))
  for (const k of [
    'url',
    'title',
    'fileId',
    'ios',
    'android',
    'fallbackUrl',
    'ssid',
    'password',
    'to',
    'subject',
    'body',
    'phone',
    'message',
    'query',
    'text',
  ] as const)
    (f as unknown as Record<string, string>)[k] = s(d[k])
  f.latitude = s(d.latitude)
  f.longitude = s(d.longitude)
  f.encryption = d.encryption ?? 'WPA'
  f.hidden = !!d.hidden
  f.place = d.latitude !== undefined ? 'coordinates' : 'query'
  if (type === 'menu') f.source = d.sections ? 'sections' : d.fileId ? 'file' : 'url'
  else f.source = d.url ? 'url' : 'file'
  if (type === 'gs1') f.gs1 = gs1FormOf(d)
  if (Array.isArray(d.sections))
    f.sections = d.sections.map((sec: ApiData) => ({
      name: s(sec.name),
      items: (sec.items ?? []).map((i: ApiData) => ({ name: s(i.name), price: s(i.price), description: s(i.description) })),
    }))
  return f
}

/** What a visitor gets, in a sentence, for the live preview. */
export function destinationText(type: LinkType, f: ContentForm): string {
  switch (type) {
    case 'link':
    case 'google-form':
      return f.url || 'the URL you enter'
    case 'email':
      return f.to ? `a new email to ${f.to}${f.subject ? ` · “${f.subject}”` : ''}` : 'a new email'
    case 'sms':
      return f.phone ? `a text message to ${f.phone}` : 'a text message'
    case 'whatsapp':
      return f.phone ? `a WhatsApp chat with ${f.phone}` : 'a WhatsApp chat'
    case 'map':
      return f.place === 'query' ? (f.query ? `a map of “${f.query}”` : 'a map') : `a map at ${f.latitude || '?'}, ${f.longitude || '?'}`
    case 'wi-fi':
      return f.ssid ? `a page to join the Wi-Fi “${f.ssid}”` : 'a page to join your Wi-Fi'
    case 'app-stores':
      return 'the App Store on iPhone, Google Play on Android'
    case 'text':
      return f.title ? `a page “${f.title}”` : 'a page with your text'
    case 'gs1':
      return f.gs1.url ? `${f.gs1.url}, or the link a scanner asks for (GS1 resolver)` : "the product's page, or the link a scanner asks for"
    case 'menu':
      return f.source === 'sections' ? `your menu (${f.sections.length} section${f.sections.length === 1 ? '' : 's'})` : 'your menu'
    default:
      return f.fileName || f.url ? `a page showing ${f.fileName || f.url}` : `a page showing your ${TYPE_INFO[type].label.toLowerCase()}`
  }
}
