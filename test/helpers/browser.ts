/**
 * Real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core) for
 * tests that must see what a visitor sees. Each page records console errors, page
 * errors and every request that leaves the allowed origins.
 */

import { existsSync } from 'node:fs'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const hasChromium = () => existsSync(CHROMIUM_PATH)

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

/** A phone-sized context (390×844 CSS px, 2× pixels, touch) that accepts downloads. */
export function phoneContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    colorScheme: 'light',
    acceptDownloads: true,
    userAgent: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Mobile Safari/537.36',
  })
}

export interface WatchedPage {
  page: Page
  /** console.error messages and uncaught exceptions (CSP violations land here too). */
  errors: string[]
  /** Network requests to anything but `allowedOrigins`. */
  externalRequests: string[]
}

export async function watchedPage(context: BrowserContext, allowedOrigins: string[]): Promise<WatchedPage> {
  const page = await context.newPage()
  const errors: string[] = []
  const externalRequests: string[] = []
  page.on('console', (m) => {
    if (m.type() !== 'error') return
    // Chromium's "Failed to load resource" names no URL in its text; its location is the resource.
    const at = m.text().startsWith('Failed to load resource') ? m.location().url : ''
    errors.push(at ? `${m.text()} (${at})` : m.text())
  })
  page.on('pageerror', (e) => errors.push(String(e)))
  page.on('request', (r) => {
    const url = r.url()
    // Only network schemes count: data:, blob: and the browser's own chrome:// (its PDF viewer) stay local.
    if (!/^(https?|wss?|ftp):/i.test(url)) return
    if (!allowedOrigins.includes(new URL(url).origin)) externalRequests.push(url)
  })
  return { page, errors, externalRequests }
}
