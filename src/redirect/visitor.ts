/**
 * What a User-Agent says about a visitor, in the seed's enum values: os, browser,
 * device, and whether it is a bot (never counted) or a social/messaging preview
 * fetcher (shown an og: page instead of a redirect).
 */

import { isbot } from 'isbot'
import { UAParser } from 'ua-parser-js'
import { LruCache } from '../shared'
import type { Browser, Device, Os } from '../stats'

export interface Visitor {
  /** Distinct per parsed User-Agent: lets the click recorder merge identical visits cheaply. */
  id: number
  os: Os
  browser: Browser
  device: Device
  isBot: boolean
  isSocialBot: boolean
}

/** Link-preview and messaging fetchers: they get the og: page, and are not counted. */
const SOCIAL_BOT =
  /facebookexternalhit|facebookcatalog|facebot|meta-externalagent|twitterbot|linkedinbot|slackbot|slack-imgproxy|whatsapp|discordbot|telegrambot|pinterest|redditbot|skypeuripreview|vkshare|embedly|iframely|mastodon|bluesky|cardyb|snapchat|viber|line\/|kakaotalk|googlebot-image|google-pagerenderer|applebot|tumblr|flipboard|bitlybot|yahoo! slurp|quora link preview|outbrain|nuzzel|w3c_validator|microsoftpreview|teams|zoom|signal|threema|wechat|xing-contenttabreceiver|mattermost|rocket\.chat|yandex/i

function osOf(name: string | undefined): Os {
  switch ((name ?? '').toLowerCase()) {
    case 'ios':
    case 'ipados':
    case 'watchos':
    case 'visionos':
      return 'IOS'
    case 'android':
    case 'android-x':
      return 'Android'
    case 'windows':
    case 'windows phone':
    case 'windows mobile':
      return 'Windows'
    case 'mac os':
    case 'macos':
      return 'MacOS'
    case 'harmonyos':
    case 'openharmony':
      return 'HarmonyOS'
    case 'linux':
    case 'ubuntu':
    case 'debian':
    case 'fedora':
    case 'arch':
    case 'gentoo':
    case 'mint':
    case 'centos':
    case 'red hat':
    case 'suse':
    case 'tizen':
    case 'webos':
    case 'manjaro':
    case 'chromium os':
    case 'kubuntu':
    case 'slackware':
      return 'Linux'
    default:
      return 'Other'
  }
}

function browserOf(name: string | undefined): Browser {
  const n = (name ?? '').toLowerCase()
  if (n === 'edge') return 'Edge'
  if (n.startsWith('opera')) return 'Opera'
  if (n === 'samsung browser' || n === 'samsung internet') return 'Samsung Internet'
  if (n === 'android browser') return 'Android Browser'
  if (n.includes('firefox')) return 'Firefox'
  if (n.includes('safari')) return 'Safari'
  if (n.includes('chrom')) return 'Chrome'
  return 'Others'
}

function deviceOf(type: string | undefined, os: Os): Device {
  switch (type) {
    case 'mobile':
      return 'Mobile'
    case 'tablet':
      return 'Tablet'
    case 'smarttv':
      return 'SmartTv'
    case 'wearable':
      return 'Wearable'
    case 'embedded':
      return 'Embedded'
    case 'xr':
      return 'XR'
    case 'console':
      return 'Others'
    case undefined:
      return os === 'IOS' || os === 'Android' ? 'Mobile' : os === 'Other' ? 'Others' : 'Desktop'
    default:
      return 'Others'
  }
}

/** Real User-Agents are under 300 characters; the rest of a longer one is not read, parsed or kept. */
export const MAX_USER_AGENT_LENGTH = 512
/** Parsed User-Agents: anyone can send new ones, so bounded by count and bytes. */
export const visitorCache = new LruCache<Visitor>({ maxEntries: 20_000, maxBytes: 8 * 2 ** 20, sizeOf: () => 96 })
let nextId = 1

export function parseVisitor(userAgent: string | null): Visitor {
  const ua = userAgent === null ? '' : userAgent.length > MAX_USER_AGENT_LENGTH ? userAgent.slice(0, MAX_USER_AGENT_LENGTH) : userAgent
  const hit = visitorCache.get(ua)
  if (hit) return hit
  const r = new UAParser(ua).getResult()
  const os = osOf(r.os.name)
  const isSocialBot = SOCIAL_BOT.test(ua)
  const visitor: Visitor = {
    id: nextId++,
    os,
    browser: browserOf(r.browser.name),
    device: deviceOf(r.device.type, os),
    isSocialBot,
    // An empty User-Agent is a script, not a person.
    isBot: isSocialBot || ua.trim() === '' || isbot(ua),
  }
  visitorCache.set(ua, visitor)
  return visitor
}
