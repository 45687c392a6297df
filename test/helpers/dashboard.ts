/**
 * The dashboard in real Chromium against the compiled binary: a signed-in page at phone
 * or desktop width that records console errors and requests leaving the origin, runs
 * axe-core, and saves screenshots to test-artifacts/dashboard/.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, type WatchedPage, watchedPage } from './browser'
import type { TestServer } from './server'

export const DASHBOARD_ARTIFACTS = resolve(import.meta.dir, '../../test-artifacts/dashboard')
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

export type Width = 'phone' | 'desktop'
const VIEWPORTS: Record<Width, { width: number; height: number }> = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } }

export interface DashboardPage extends WatchedPage {
  context: BrowserContext
  origin: string
  /** Opens `/app<path>` and waits for the app to settle (no request in flight). */
  goto(path: string): Promise<void>
  /** Saves test-artifacts/dashboard/<name>-<width>.png (full page). */
  screenshot(name: string): Promise<void>
  /** axe-core violations of impact serious or critical on the current page, as readable lines. */
  seriousA11yViolations(): Promise<string[]>
  close(): Promise<void>
}

export type SignIn = { apiKey: string } | { userId: string; password: string } | null

export interface DashboardBrowser {
  browser: Browser
  open(server: TestServer, options?: { width?: Width; signIn?: SignIn }): Promise<DashboardPage>
  close(): Promise<void>
}

export async function dashboardBrowser(): Promise<DashboardBrowser> {
  const browser = await launchBrowser()
  mkdirSync(DASHBOARD_ARTIFACTS, { recursive: true })
  return {
    browser,
    async open(server, { width = 'desktop', signIn = { apiKey: server.adminKey } } = {}) {
      // The server's TLS is real; the browser does not know the test CA, so certificate errors are ignored here only.
      const context = await browser.newContext({
        viewport: VIEWPORTS[width],
        deviceScaleFactor: 1,
        isMobile: width === 'phone',
        hasTouch: width === 'phone',
        ignoreHTTPSErrors: true,
        acceptDownloads: true,
        colorScheme: 'light',
      })
      const origin = `https://localhost:${server.httpsPort}`
      const watched = await watchedPage(context, [origin])
      const { page } = watched
      const dash: DashboardPage = {
        ...watched,
        context,
        origin,
        async goto(path) {
          await page.goto(`${origin}/app${path}`, { waitUntil: 'networkidle' })
        },
        async screenshot(name) {
          await page.screenshot({ path: `${DASHBOARD_ARTIFACTS}/${name}-${width}.png`, fullPage: true })
        },
        async seriousA11yViolations() {
          // evaluate() runs outside the page's CSP, which forbids inline scripts.
          await page.evaluate(`${AXE_SOURCE};0`)
          const result = (await page.evaluate(() => (window as any).axe.run(document, { resultTypes: ['violations'] }))) as {
            violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[]
          }
          return result.violations
            .filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
        },
        close: () => context.close(),
      }
      if (signIn) await signInThroughForm(page, origin, signIn)
      return dash
    },
    close: () => browser.close(),
  }
}

/** Signs in through the sign-in form, as a person does, and waits for the app's navigation. */
export async function signInThroughForm(page: Page, origin: string, signIn: Exclude<SignIn, null>) {
  await page.goto(`${origin}/app/`, { waitUntil: 'networkidle' })
  if ('apiKey' in signIn) {
    await page.getByRole('radio', { name: 'API key' }).check()
    await page.locator('input[name="apiKey"]').fill(signIn.apiKey)
  } else {
    await page.getByLabel('User id').fill(signIn.userId)
    await page.locator('input[name="password"]').fill(signIn.password)
  }
  await page.getByRole('button', { name: 'Sign in' }).click()
  // At phone width the menu is closed (hidden) after sign-in: wait for it to exist, not to show.
  await page.locator('nav#nav').waitFor({ state: 'attached' })
}
