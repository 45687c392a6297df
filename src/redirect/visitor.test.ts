import { expect, test } from 'bun:test'
import { MAX_USER_AGENT_LENGTH, parseVisitor, visitorCache } from './visitor'

const UA = {
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  pixel: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  samsung: 'Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  winEdge: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51',
  macSafari: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  linuxFirefox: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  opera: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36 OPR/109.0.0.0',
  harmony:
    'Mozilla/5.0 (Phone; OpenHarmony 4.1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/114.0.0.0 Safari/537.36 ArkWeb/4.1.6.1 Mobile HuaweiBrowser/5.0.4.300',
  smartTv: 'Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) 85.0.4183.93/6.0 TV Safari/537.36',
  facebook: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  whatsapp: 'WhatsApp/2.23.20.0',
  slack: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  curl: 'curl/8.5.0',
}

test.each([
  ['iphone', 'IOS', 'Safari', 'Mobile'],
  ['ipad', 'IOS', 'Safari', 'Tablet'],
  ['pixel', 'Android', 'Chrome', 'Mobile'],
  ['samsung', 'Android', 'Samsung Internet', 'Mobile'],
  ['winEdge', 'Windows', 'Edge', 'Desktop'],
  ['macSafari', 'MacOS', 'Safari', 'Desktop'],
  ['linuxFirefox', 'Linux', 'Firefox', 'Desktop'],
  ['opera', 'Windows', 'Opera', 'Desktop'],
  ['smartTv', 'Linux', 'Safari', 'SmartTv'],
] as const)('%s → %s / %s / %s', (name, os, browser, device) => {
  const v = parseVisitor(UA[name])
  expect(v).toMatchObject({ os, browser, device, isBot: false, isSocialBot: false })
})

test('HarmonyOS is its own os', () => {
  expect(parseVisitor(UA.harmony)).toMatchObject({ os: 'HarmonyOS', device: 'Mobile', isBot: false })
})

test('bots: social previewers are flagged as such; others are plain bots', () => {
  for (const name of ['facebook', 'whatsapp', 'slack'] as const) expect(parseVisitor(UA[name])).toMatchObject({ isBot: true, isSocialBot: true })
  for (const name of ['googlebot', 'curl'] as const) expect(parseVisitor(UA[name])).toMatchObject({ isBot: true, isSocialBot: false })
  expect(parseVisitor('').isBot).toBe(true)
  expect(parseVisitor(null).isBot).toBe(true)
})

test('a long User-Agent is read up to 512 characters and kept only that long', () => {
  const long = UA.iphone + ' '.padEnd(16 * 1024, 'x')
  const before = visitorCache.bytes
  const v = parseVisitor(long)
  expect(v).toMatchObject({ os: 'IOS', browser: 'Safari', device: 'Mobile', isBot: false })
  expect(visitorCache.bytes - before).toBeLessThan(2 * MAX_USER_AGENT_LENGTH + 1024)
  // The same first 512 characters are the same visitor.
  expect(parseVisitor(`${long.slice(0, MAX_USER_AGENT_LENGTH)}other tail`).id).toBe(v.id)
})

test('random long User-Agents keep the parsed-visitor cache within its byte cap', () => {
  for (let i = 0; i < 10_000; i++) parseVisitor(`Mozilla/5.0 ${i} `.padEnd(16 * 1024, 'y'))
  expect(visitorCache.bytes).toBeLessThanOrEqual(8 * 2 ** 20)
})
