/**
 * The README's first screen, run as a newcomer runs it: the commands between the
 * `first-link` markers go through bash and curl against a fresh server (the binary, on a
 * random port instead of 8443, with the key it printed), and must give a short link, a QR
 * code that decodes to it, and a visit that counts. What the README says of curl's own
 * visits (a bot's: redirected, not counted) holds too.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { until } from './helpers/poll'
import { startServer, type TestServer } from './helpers/server'

const README = readFileSync(resolve(import.meta.dir, '../README.md'), 'utf8')

let s: TestServer
beforeAll(async () => {
  s = await startServer()
}, 60_000)
afterAll(async () => {
  await s?.stop()
}, 60_000)

/** The shell lines of the README's first-link block, for this server's port and key. */
function firstLinkScript(): string {
  const block = /<!-- first-link:start -->\n```sh\n([\s\S]*?)```\n<!-- first-link:end -->/.exec(README)?.[1]
  if (!block) throw new Error('README.md has no first-link block between its markers')
  expect(block).toContain('KEY=sk_…')
  return block.replace('KEY=sk_…', `KEY=${s.adminKey}`).replaceAll('localhost:8443', `localhost:${s.httpsPort}`)
}

async function bash(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn(['bash', '-c', script], { cwd: s.dir, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  return { code: await p.exited, stdout, stderr }
}

test("the README's three commands make a short link, its QR code and a counted visit", async () => {
  const script = firstLinkScript()
  const ran = await bash(script)
  expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' })
  const link = JSON.parse(ran.stdout.split('\n')[0]!) as { id: string; shortLink: string; destination: string }
  expect(link.id).toMatch(/^lnk_/)
  expect(link.shortLink).toMatch(new RegExp(`^https://localhost:${s.httpsPort}/[A-Za-z0-9]+$`))
  expect(ran.stdout).toContain('\n302 https://example.com/\n')

  // The QR code is a PNG that a real decoder reads as the short link (marked as a scan).
  const decoded = Bun.spawnSync(['zbarimg', '-q', '--raw', join(s.dir, 'qr.png')])
  expect(decoded.stdout.toString().trim()).toBe(`${link.shortLink}?qr=1`)

  // The count: the README waits two seconds; on a loaded machine the last command is asked again until the click is written.
  const countLine = script.trim().split('\n').at(-1)!
  let counted = ran.stdout.trim().split('\n').at(-1)!
  if (counted !== '"clicks":1')
    counted = await until(
      'the visit to be written',
      async () => (await bash(countLine)).stdout.trim(),
      (out) => out === '"clicks":1',
      15_000,
    )
  expect(counted).toBe('"clicks":1')

  // curl's own User-Agent: redirected, and not counted.
  const plain = await bash(`curl -s --cacert data/tls/ca.pem -o /dev/null -w '%{http_code}' ${link.shortLink}`)
  expect(plain.stdout).toBe('302')
  await s.clicksFlushed()
  expect(((await (await s.api(`/links/${link.id}`)).json()) as { clicks: number }).clicks).toBe(1)
})
