import { describe, expect, test } from 'bun:test'
import { esc, formatBytes, safeUrl } from './html'
import { LANDING_PAGE_TYPES, type LandingLink, type PageContext, renderLandingPage } from './index'
import { wifiPayload } from './qr-svg'
import { linkify } from './text.page'

const XSS = `"><script>alert(1)</script><img src=x onerror=alert(2)>'\``
const base = (linkType: string, data: Record<string, any>, extra: Partial<LandingLink> = {}): LandingLink => ({
  linkType,
  data,
  shortLink: 'https://s.example/abc',
  domain: 's.example',
  destination: 'https://s.example/abc',
  ...extra,
})
const ctx: PageContext = {
  fileUrl: (id) => `/_files/${id}`,
  file: (id) => (id === 'fil_gone' ? null : { name: `${XSS}.pdf`, size: 2048, mimeType: id.includes('img') ? 'image/png' : 'application/pdf' }),
}

/** Every user-supplied string, in every hosted type. */
const hostile: LandingLink[] = [
  base('text', { text: XSS, title: XSS }),
  base('wi-fi', { ssid: XSS.slice(0, 32), password: XSS.slice(0, 63), encryption: 'WPA' }),
  base('menu', { title: XSS, sections: [{ name: XSS, items: [{ name: XSS, price: XSS.slice(0, 30), description: XSS }] }] }),
  base('menu', { url: `https://m.example/?q=${XSS}` }),
  base('document', { fileId: 'fil_doc', title: XSS }),
  base('image', { fileId: 'fil_img', title: XSS }),
  base('svg', { url: `https://x.example/a.svg?${XSS}` }),
  base('audio', { url: 'https://x.example/a.mp3', title: XSS }),
  base('video', { url: 'https://x.example/a.mp4', title: XSS }),
  base('file', { fileId: 'fil_doc' }),
  base('app-stores', { ios: `https://apps.apple.com/app/${XSS}`, android: 'javascript:alert(3)', fallbackUrl: 'https://x.example', title: XSS }),
]

describe('escaping', () => {
  /** Every element and attribute as a browser's parser would see them. */
  async function parse(html: string) {
    const elements: { tag: string; attrs: [string, string][] }[] = []
    await new HTMLRewriter()
      .on('*', { element: (e) => void elements.push({ tag: e.tagName, attrs: [...e.attributes] as [string, string][] }) })
      .transform(new Response(html))
      .text()
    return elements
  }

  for (const link of hostile)
    test(`${link.linkType} escapes every user-supplied value`, async () => {
      const html = renderLandingPage(
        { ...link, previewData: { title: XSS, desc: XSS, image: 'javascript:alert(4)' }, option: { isWaterMark: true, watermarkText: XSS.slice(0, 64) } },
        ctx,
      )!
      const elements = await parse(html)
      // The payload's <img src=x> and event handlers never become markup.
      expect(elements.filter((e) => e.tag === 'img' && e.attrs.some(([k, v]) => k === 'src' && v === 'x'))).toEqual([])
      expect(elements.flatMap((e) => e.attrs.filter(([k]) => k.startsWith('on')))).toEqual([])
      expect(elements.flatMap((e) => e.attrs.filter(([k, v]) => ['href', 'src'].includes(k) && !/^(https?:|\/|#)/.test(v)))).toEqual([])
      expect(html.includes('javascript:')).toBe(false)
      // Only our own inline scripts, each allowed by a CSP hash.
      const scripts = elements.filter((e) => e.tag === 'script').length
      const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)![1]!.replaceAll('&#39;', "'")
      const hashes = /script-src ([^;]*)/.exec(csp)![1]!.match(/'sha256-[A-Za-z0-9+/=]+'/g)?.length ?? 0
      expect(scripts).toBe(hashes)
    })

  test('helpers', () => {
    expect(esc(`<a href="x">'&\``)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#96;')
    expect(safeUrl('javascript:alert(1)')).toBeNull()
    expect(safeUrl('//evil.example/x')).toBeNull()
    expect(safeUrl('/_files/fil_1')).toBe('/_files/fil_1')
    expect(safeUrl('https://A.example/x y')).toBe('https://a.example/x%20y')
    expect(formatBytes(512)).toBe('512 bytes')
    expect(formatBytes(1536)).toBe('1.5 KB')
    expect(formatBytes(25 * 1024 * 1024)).toBe('25 MB')
    expect(linkify('see https://a.example/x?y=1. <b>')).toBe(
      'see <a href="https://a.example/x?y=1" rel="nofollow noopener ugc">https://a.example/x?y=1</a>. &lt;b&gt;',
    )
  })
})

describe('previews and page shell', () => {
  test('og:/twitter: tags come from previewData', () => {
    const html = renderLandingPage(
      base('text', { text: 'hello' }, { previewData: { title: 'Card title', desc: 'Card desc', image: 'https://img.example/card.png' } }),
      ctx,
    )!
    expect(html).toContain('<meta property="og:title" content="Card title">')
    expect(html).toContain('<meta property="og:description" content="Card desc">')
    expect(html).toContain('<meta property="og:image" content="https://img.example/card.png">')
    expect(html).toContain('<meta name="twitter:card" content="summary_large_image">')
    expect(html).toContain('<meta property="og:url" content="https://s.example/abc">')
    expect(html).toContain('<html lang="en">')
    expect(html).toContain('<meta name="viewport"')
  })

  test('without previewData: the page title, a type description, and the image itself for image links', () => {
    const text = renderLandingPage(base('text', { text: 'Opening hours 9-5', title: 'Hours' }), ctx)!
    expect(text).toContain('<meta property="og:title" content="Hours">')
    expect(text).toContain('<meta property="og:description" content="Opening hours 9-5">')
    expect(text).toContain('<meta name="twitter:card" content="summary">')
    const img = renderLandingPage(base('image', { fileId: 'fil_img1' }), ctx)!
    expect(img).toContain('<meta property="og:image" content="https://s.example/_files/fil_img1">')
    const wifi = renderLandingPage(base('wi-fi', { ssid: 'Cafe', password: 'secret-pass', encryption: 'WPA' }), ctx)!
    expect(wifi).toContain('<meta property="og:description" content="Join the Wi-Fi network Cafe.">')
    expect(wifi.match(/<meta[^>]*secret-pass/)).toBeNull()
  })

  test('every hosted type renders; redirecting types do not', () => {
    expect(LANDING_PAGE_TYPES.toSorted()).toEqual(['app-stores', 'audio', 'document', 'file', 'image', 'menu', 'svg', 'text', 'video', 'wi-fi'])
    expect(renderLandingPage(base('link', { url: 'https://x.example' }), ctx)).toBeNull()
  })

  test('a deleted upload renders the not-available page', () => {
    const html = renderLandingPage(base('document', { fileId: 'fil_gone' }), ctx)!
    expect(html).toContain('Content not available')
    expect(html).not.toContain('/_files/fil_gone')
  })
})

describe('content protection', () => {
  test('watermark defaults to the short domain and covers images, documents and video', () => {
    for (const type of ['image', 'document', 'video']) {
      const html = renderLandingPage(base(type, { url: 'https://x.example/a' }, { option: { isWaterMark: true } }), ctx)!
      expect(html).toContain('data-watermark="s.example"')
    }
    const custom = renderLandingPage(
      base('image', { url: 'https://x.example/a.png' }, { option: { isWaterMark: true, watermarkText: 'ACME confidential' } }),
      ctx,
    )!
    expect(custom).toContain('data-watermark="ACME confidential"')
    expect(renderLandingPage(base('image', { url: 'https://x.example/a.png' }), ctx)).not.toContain('data-watermark')
  })

  test('the watermark covers the content of every hosted type', () => {
    // What each page shows, which must sit inside the watermarked box.
    const content: Record<string, RegExp> = {
      text: /id="text"/,
      'wi-fi': /id="ssid"[\s\S]*id="security"/,
      menu: /class="items"|<iframe/,
      document: /<iframe/,
      image: /<img class="media"/,
      svg: /<img class="media"/,
      audio: /<audio/,
      video: /<video/,
      file: /class="filecard"/,
      'app-stores': /class="stores"/,
    }
    const covered = new Set<string>()
    // A menu on the restaurant's own web page is only a button out: nothing hosted to cover.
    for (const link of hostile.filter((l) => !(l.linkType === 'menu' && l.data.url))) {
      const html = renderLandingPage({ ...link, option: { isWaterMark: true, watermarkText: 'ACME' } }, ctx)!
      const boxes = [...html.matchAll(/<div class="protected[^"]*">([\s\S]*?)<div class="wm" aria-hidden="true" data-watermark="ACME">/g)].map((m) => m[1]!)
      expect({ type: link.linkType, covered: boxes.some((inner) => content[link.linkType]!.test(inner)) }).toEqual({ type: link.linkType, covered: true })
      covered.add(link.linkType)
    }
    expect([...covered].sort()).toEqual([...LANDING_PAGE_TYPES].sort())
  })

  test('screenshot protection: deterrent script, print hiding, no download links', () => {
    const open = renderLandingPage(base('document', { fileId: 'fil_doc' }), ctx)!
    expect(open).toContain('download')
    const html = renderLandingPage(base('document', { fileId: 'fil_doc' }, { option: { isScreenshotProtected: true } }), ctx)!
    expect(html).toContain('<body class="sp">')
    expect(html).toContain("'contextmenu'")
    expect(html).toContain('visibilitychange')
    expect(html).toContain('@media print')
    expect(html).not.toMatch(/<a [^>]*download/)
    expect(html).toContain('#toolbar=0')
    const video = renderLandingPage(base('video', { url: 'https://x.example/v.mp4' }, { option: { isScreenshotProtected: true } }), ctx)!
    expect(video).toContain('controlslist="nodownload')
  })
})

test('wi-fi payload escapes the special characters of the WIFI: format', () => {
  expect(wifiPayload({ ssid: 'Cafe', password: 'pass1234', encryption: 'WPA' })).toBe('WIFI:T:WPA;S:Cafe;P:pass1234;;')
  expect(wifiPayload({ ssid: 'a;b,c:d"e\\f', password: 'p;w', encryption: 'WPA', hidden: true })).toBe('WIFI:T:WPA;S:a\\;b\\,c\\:d\\"e\\\\f;P:p\\;w;H:true;;')
  expect(wifiPayload({ ssid: 'Open', encryption: 'nopass' })).toBe('WIFI:T:nopass;S:Open;;')
})
