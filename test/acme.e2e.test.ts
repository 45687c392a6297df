/**
 * Custom domains get real certificates: the server (self-signed mode for its own host)
 * orders them from a real ACME CA (Debian's pebble) over HTTP-01 answered by its port-80
 * listener, decides CNAMEs against a real DNS server (pebble-challtestsrv), and serves
 * each certificate by SNI without a restart.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import tls from 'node:tls'
import { type Pebble, pebbleInstalled, startPebble } from './helpers/pebble'
import { until } from './helpers/poll'
import { freePort, json, startServer, type TestServer } from './helpers/server'

const TARGET = 'edge.shortlink.test'

interface Peer {
  ok: boolean
  error?: string
  subject?: string
  issuer?: string
  serial?: string
  validFrom?: string
  validTo?: string
}

/** TLS handshake with SNI `name`, verifying against `ca`. */
function peerCertificate(port: number, name: string, ca: string): Promise<Peer> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: name, ca, rejectUnauthorized: true }, () => {
      const c = socket.getPeerCertificate()
      resolve({ ok: true, subject: String(c.subject?.CN), issuer: String(c.issuer?.CN), serial: c.serialNumber, validFrom: c.valid_from, validTo: c.valid_to })
      socket.end()
    })
    socket.on('error', (e) => resolve({ ok: false, error: e.message }))
    socket.setTimeout(5000, () => {
      resolve({ ok: false, error: 'timeout' })
      socket.destroy()
    })
  })
}

async function curl(port: number, name: string, caFile: string): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(
    [
      'curl',
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '--resolve',
      `${name}:${port}:127.0.0.1`,
      '--cacert',
      caFile,
      `https://${name}:${port}/robots.txt`,
    ],
    {
      stdout: 'pipe',
      stderr: 'pipe',
    },
  )
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
  return { code: await p.exited, out: out + err }
}

/** The Strict-Transport-Security header of an HTTPS answer for `name` ('' when absent); -k: no certificate check. */
async function hstsOf(port: number, name: string): Promise<string> {
  const p = Bun.spawn(['curl', '-sS', '-k', '-o', '/dev/null', '-D', '-', '--resolve', `${name}:${port}:127.0.0.1`, `https://${name}:${port}/robots.txt`], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const head = await new Response(p.stdout).text()
  await p.exited
  return /^strict-transport-security: *(.*?)\r?$/im.exec(head)?.[1] ?? ''
}

/**
 * An API call after a certificate swap. It rides a pooled keep-alive connection, which the swap may
 * have closed while idle (ECONNRESET before any answer: nothing was done); it is sent again on a new
 * connection, as an HTTP client does.
 */
function apiAfterSwap(s: TestServer, path: string, init: Parameters<TestServer['api']>[1]): Promise<Response> {
  return s.api(path, init).catch((e: Error) => {
    if (!/ECONNRESET|socket connection was closed/i.test(e.message)) throw e
    return s.api(path, { ...init, headers: { ...(init?.headers as Record<string, string>), connection: 'close' } })
  })
}

async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(everyMs)
  }
}

async function serverWithPebble(opts: { certValiditySeconds?: number; tlsToml?: string; domainsToml?: string; env?: Record<string, string> } = {}) {
  const httpPort = await freePort()
  const pebble = await startPebble({ httpPort, certValiditySeconds: opts.certValiditySeconds })
  await pebble.addA(TARGET, ['127.0.0.1'])
  const root = await pebble.root()
  const rootFile = `${pebble.dir}/root.pem`
  await Bun.write(rootFile, root)
  const toml = `
[tls]
acmeDirectory = "${pebble.directory}"
acmeCaFile = "${pebble.apiCaFile}"
acmePollMs = 50
acmeRetryMs = 1000
${opts.tlsToml ?? ''}

[domains]
cnameTarget = "${TARGET}"
dnsServers = ["${pebble.dns}"]
${opts.domainsToml ?? ''}
`
  // The port pebble validates HTTP-01 on must be our plain-HTTP port.
  const env = { SHORTLINK_SERVER_HTTPPORT: String(httpPort), ...opts.env }
  const server = await startServer({ toml, env })
  return { pebble, server, root, rootFile, toml, env }
}

describe.skipIf(!pebbleInstalled())('ACME certificates for custom domains (pebble)', () => {
  let pebble: Pebble
  let s: TestServer
  let root = ''
  let rootFile = ''
  let toml = ''
  let env: Record<string, string> = {}

  beforeAll(async () => {
    ;({ pebble, server: s, root, rootFile, toml, env } = await serverWithPebble())
  })
  afterAll(async () => {
    await s?.stop()
    await pebble?.stop()
  })

  const domain = async (slug: string) => (await json(await s.api(`/domains/${slug}`))).body
  /**
   * The domain once its status has left `issuing`. The status is written after the certificate, so it may say
   * `issuing` a moment longer than the listener takes to serve it (on PostgreSQL the stored certificate's news swaps
   * the listener on its own; a busy run saw the swap first). Never `active` before the certificate is stored.
   */
  const pastIssuing = (slug: string) =>
    waitFor(`${slug} past issuing`, async () => {
      const d = await domain(slug)
      return d.sslStatus === 'issuing' ? null : d
    })

  test('a valid CNAME gets a certificate from the CA, served by SNI without a restart', async () => {
    await pebble.setCname('shop.example.com', TARGET)
    const before = await peerCertificate(s.httpsPort, 'shop.example.com', root)
    expect(before.ok).toBe(false) // the self-signed default is not trusted by the CA's root

    const t0 = performance.now()
    const created = await json(await s.api('/domains', { method: 'POST', json: { domain: 'shop.example.com' } }))
    expect(created.status).toBe(200)
    // The first CNAME check is due at once: on PostgreSQL (the answer is read back after the awaited insert) it may
    // have found the CNAME already and started the order.
    expect([created.body.cnameStatus, created.body.sslStatus]).toEqual(
      created.body.cnameStatus === 'valid' ? ['valid', expect.stringMatching(/^(pending|issuing)$/)] : ['pending', 'pending'],
    )
    const served = await waitFor(
      'certificate served',
      async () => {
        const p = await peerCertificate(s.httpsPort, 'shop.example.com', root)
        return p.ok ? p : null
      },
      20_000,
      10,
    )
    const ms = performance.now() - t0
    const order = /"msg":"certificate issued","name":"shop.example.com".*?"ms":(\d+)/.exec(s.output())?.[1]
    console.log(`POST /domains → certificate served: ${ms.toFixed(0)} ms (the ACME order itself: ${order} ms; listener swap debounce: 200 ms)`)
    expect(served.subject).toBe('shop.example.com')
    expect(served.issuer).toStartWith('Pebble Intermediate CA')
    expect(await pastIssuing('shop.example.com')).toMatchObject({ cnameStatus: 'valid', sslStatus: 'active', sslError: null })

    const c = await curl(s.httpsPort, 'shop.example.com', rootFile)
    expect(c).toEqual({ code: 0, out: expect.stringMatching(/^\d{3}$/) })
    // The API host keeps its own certificate.
    expect((await s.api('/domains')).status).toBe(200)
    const apiCert = await peerCertificate(s.httpsPort, 'localhost', s.ca)
    expect([apiCert.ok, apiCert.issuer]).toEqual([true, 'shortlink local CA'])
  })

  test('short links on the custom domain redirect over HTTPS with its certificate, fallbacks and deep-link files', async () => {
    // Runs after the certificate test above: shop.example.com is valid and served.
    const patched = await s.api('/domains/shop.example.com', {
      method: 'PATCH',
      json: {
        notFoundUrl: 'https://shop.example.net/missing',
        destination: 'https://shop.example.net/',
        assetLinks: '[{"relation":["delegate_permission/common.handle_all_urls"]}]',
      },
    })
    expect(patched.status).toBe(200)
    const link = await s.api('/links/link', {
      method: 'POST',
      json: { data: { url: 'https://shop.example.net/sale' }, linkOptions: { domain: 'SHOP.example.com', key: 'sale' } },
    })
    expect(link.status).toBe(200)
    expect(((await link.json()) as any).shortLink).toBe(`https://shop.example.com:${s.httpsPort}/sale`)
    const get = async (path: string) => {
      const bodyFile = `${pebble.dir}/body.out`
      const p = Bun.spawn(
        [
          'curl',
          '-sS',
          '-A',
          'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0',
          '-o',
          bodyFile,
          '-w',
          '%{http_code} %{redirect_url}',
          '--resolve',
          `shop.example.com:${s.httpsPort}:127.0.0.1`,
          '--cacert',
          rootFile,
          `https://shop.example.com:${s.httpsPort}${path}`,
        ],
        { stdout: 'pipe', stderr: 'pipe' },
      )
      const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()])
      expect([await p.exited, err]).toEqual([0, '']) // the TLS handshake verified against the CA's root
      return { out, body: await Bun.file(bodyFile).text() }
    }
    expect((await get('/sale')).out).toBe('302 https://shop.example.net/sale')
    // HSTS once the domain's certificate is active, as on the API host and the default domains.
    expect(await hstsOf(s.httpsPort, 'shop.example.com')).toBe('max-age=31536000')
    expect(await hstsOf(s.httpsPort, 'localhost')).toBe('max-age=31536000')
    expect((await s.api('/domains')).headers.get('strict-transport-security')).toBe('max-age=31536000')
    expect((await get('/nope')).out).toBe('302 https://shop.example.net/missing')
    expect((await get('/')).out).toBe('302 https://shop.example.net/')
    const wellKnown = await get('/.well-known/assetlinks.json')
    expect(wellKnown.out).toStartWith('200')
    expect(JSON.parse(wellKnown.body)[0].relation).toEqual(['delegate_permission/common.handle_all_urls'])
    // The visit counts for the link and its domain.
    // A domain's count follows its batch's link counts (the recorder's after-flush hook): within the flush window.
    await s.clicksFlushed()
    const domain = await until(
      'the domain counts the visit',
      async () => (await json(await s.api('/domains/shop.example.com'))).body,
      (d) => d.clicks >= 1,
    )
    expect(domain.clicks).toBe(1)
    // A default domain does not serve the custom domain's links.
    const other = await s.fetch(`https://localhost:${s.httpsPort}/sale`, { headers: { 'user-agent': 'Mozilla/5.0 Firefox/125.0' } })
    expect(other.status).toBe(404)
  })

  test('a CNAME pointing elsewhere is invalid and gets no certificate', async () => {
    await pebble.setCname('elsewhere.example.com', 'other-service.example.org')
    expect((await s.api('/domains', { method: 'POST', json: { domain: 'elsewhere.example.com' } })).status).toBe(200)
    const d = await waitFor('cname checked', async () => {
      const d = await domain('elsewhere.example.com')
      return d.cnameStatus !== 'pending' ? d : null
    })
    expect(d).toMatchObject({ cnameStatus: 'invalid', sslStatus: 'pending' })
    await Bun.sleep(500)
    expect((await domain('elsewhere.example.com')).sslStatus).toBe('pending')
    expect((await peerCertificate(s.httpsPort, 'elsewhere.example.com', root)).ok).toBe(false)
    // No HSTS without a certificate of its own: browsers would pin the name to a certificate it does not have.
    expect(await hstsOf(s.httpsPort, 'elsewhere.example.com')).toBe('')
  })

  test('SERVFAIL leaves the CNAME pending; once DNS answers, verify makes it valid and a certificate follows', async () => {
    await pebble.setServfail('flaky.example.com')
    expect((await s.api('/domains', { method: 'POST', json: { domain: 'flaky.example.com' } })).status).toBe(200)
    // The first check, due at once, ran and failed temporarily: the record says so.
    const checked = await waitFor('first check', async () => {
      const d = await domain('flaky.example.com')
      return d.cnameDetail?.includes('failed temporarily') && d
    })
    expect(checked).toMatchObject({ cnameStatus: 'pending', sslStatus: 'pending' })
    const v = await json(await s.api('/domains/flaky.example.com/verify', { method: 'POST' }))
    expect(v.body).toMatchObject({ cnameStatus: 'pending', sslStatus: 'pending' })

    await pebble.clearServfail('flaky.example.com')
    await pebble.setCname('flaky.example.com', TARGET)
    const fixed = await json(await s.api('/domains/flaky.example.com/verify', { method: 'POST' }))
    expect(fixed.body.cnameStatus).toBe('valid')
    await waitFor('certificate for flaky', async () => (await peerCertificate(s.httpsPort, 'flaky.example.com', root)).ok)
    expect((await pastIssuing('flaky.example.com')).sslStatus).toBe('active')
  })

  test('a refused challenge fails with the reason, then succeeds on the retry after the fix', async () => {
    // The CNAME is right, but the CA reaches the target at an address nothing listens on.
    await pebble.setCname('refused.example.com', TARGET)
    await pebble.clearA(TARGET)
    await pebble.addA(TARGET, ['127.0.0.2'])
    try {
      expect((await s.api('/domains', { method: 'POST', json: { domain: 'refused.example.com' } })).status).toBe(200)
      const failed = await waitFor('order failed', async () => {
        const d = await domain('refused.example.com')
        return d.sslStatus === 'failed' ? d : null
      })
      expect(failed.cnameStatus).toBe('valid')
      expect(failed.sslError).toContain('127.0.0.2')
      expect(failed.sslError).toMatch(/refused/i)
    } finally {
      await pebble.clearA(TARGET)
      await pebble.addA(TARGET, ['127.0.0.1'])
    }
    // No API call: the background retry (acmeRetryMs = 1 s, doubling) picks it up.
    const ok = await waitFor(
      'retry succeeded',
      async () => {
        const d = await domain('refused.example.com')
        return d.sslStatus === 'active' ? d : null
      },
      15_000,
      100,
    )
    expect(ok.sslError).toBeNull()
    // Served after the debounced listener swap.
    await waitFor('certificate for refused', async () => (await peerCertificate(s.httpsPort, 'refused.example.com', root)).ok, 5000)
  })

  test('certificate swaps under load lose (almost) no requests', async () => {
    const url = `https://localhost:${s.httpsPort}/robots.txt`
    let ok = 0
    let failed = 0
    const errors = new Map<string, number>()
    let running = true
    // Half the clients reuse connections, half open a new one per request (mid-handshake during a swap is the risky moment).
    const worker = async (i: number) => {
      while (running) {
        try {
          const r = await fetch(url, { tls: { ca: s.ca }, keepalive: i % 2 === 0 } as RequestInit)
          await r.arrayBuffer()
          if (r.status === 200) ok++
          else failed++
        } catch (e) {
          failed++
          const m = (e as Error).message
          errors.set(m, (errors.get(m) ?? 0) + 1)
        }
      }
    }
    const swapsBefore = (s.output().match(/https certificates reloaded/g) ?? []).length
    const workers = Array.from({ length: 8 }, (_, i) => worker(i))
    const names = Array.from({ length: 5 }, (_, i) => `load${i}.example.com`)
    // Answers counted at each swap: every window between swaps, and the time after the last, must have some.
    const okAtSwap: number[] = []
    for (const n of names) {
      await pebble.setCname(n, TARGET)
      const added = await apiAfterSwap(s, '/domains', { method: 'POST', json: { domain: n } })
      expect(added.status).toBeLessThan(300)
      await waitFor(`certificate for ${n}`, async () => (await peerCertificate(s.httpsPort, n, root)).ok, 20_000, 20)
      okAtSwap.push(ok)
    }
    await waitFor('answers after the last swap', async () => ok > okAtSwap.at(-1)! + 50)
    running = false
    await Promise.all(workers)
    const swaps = (s.output().match(/https certificates reloaded/g) ?? []).length - swapsBefore
    console.log(`swap under load: ${swaps} swaps, ${ok} ok, ${failed} failed`, Object.fromEntries(errors))
    expect(swaps).toBeGreaterThanOrEqual(5)
    expect(okAtSwap.every((n, i) => n > (okAtSwap[i - 1] ?? 0))).toBe(true)
    // Connections in the old listener's accept queue are reset (0.6 per swap measured) unless tcp_migrate_req=1.
    expect(failed).toBeLessThanOrEqual(2 * swaps)
  })

  test('deleting a domain stops serving its certificate; a restart serves the stored ones at once', async () => {
    expect((await apiAfterSwap(s, '/domains/load0.example.com', { method: 'DELETE' })).status).toBe(200)
    await waitFor('certificate dropped', async () => !(await peerCertificate(s.httpsPort, 'load0.example.com', root)).ok, 5000)

    expect(await s.stop()).toBe(0)
    s = await startServer({ dir: s.dir, toml, env })
    const t0 = performance.now()
    const p = await peerCertificate(s.httpsPort, 'shop.example.com', root)
    expect([p.ok, p.subject]).toEqual([true, 'shop.example.com'])
    console.log(`after restart, first handshake served the stored certificate in ${(performance.now() - t0).toFixed(0)} ms`)
    expect((await peerCertificate(s.httpsPort, 'load0.example.com', root)).ok).toBe(false)
  })
})

describe.skipIf(!pebbleInstalled())('renewal (pebble issuing 12-second certificates)', () => {
  let pebble: Pebble
  let s: TestServer
  let root = ''
  beforeAll(async () => {
    ;({ pebble, server: s, root } = await serverWithPebble({ certValiditySeconds: 12 }))
  })
  afterAll(async () => {
    await s?.stop()
    await pebble?.stop()
  })

  test('a certificate is renewed in the last third of its life and the new one is served', async () => {
    await pebble.setCname('renew.example.com', TARGET)
    expect((await s.api('/domains', { method: 'POST', json: { domain: 'renew.example.com' } })).status).toBe(200)
    const first = await waitFor('first certificate', async () => {
      const p = await peerCertificate(s.httpsPort, 'renew.example.com', root)
      return p.ok ? p : null
    })
    const second = await waitFor(
      'renewed certificate',
      async () => {
        const p = await peerCertificate(s.httpsPort, 'renew.example.com', root)
        return p.ok && p.serial !== first.serial ? p : null
      },
      20_000,
      100,
    )
    const seenAt = Date.now()
    const from = Date.parse(first.validFrom!)
    const to = Date.parse(first.validTo!)
    const renewAt = from + ((to - from) * 2) / 3
    console.log(
      `renewed ${((seenAt - from) / 1000).toFixed(1)} s into a ${((to - from) / 1000).toFixed(0)} s lifetime (renewal due at ${((renewAt - from) / 1000).toFixed(1)} s)`,
    )
    expect(seenAt).toBeGreaterThanOrEqual(renewAt)
    expect(seenAt).toBeLessThan(to) // the old one never expired while served
    expect(Date.parse(second.validTo!)).toBeGreaterThan(Date.parse(first.validTo!))
    expect(s.output()).toContain('"msg":"certificate renewed"')
  })
})

describe.skipIf(!pebbleInstalled())('tls.mode = "acme": the API host and default domains', () => {
  let pebble: Pebble
  let s: TestServer
  let root = ''
  let rootFile = ''
  beforeAll(async () => {
    ;({
      pebble,
      server: s,
      root,
      rootFile,
    } = await serverWithPebble({
      tlsToml: 'mode = "acme"',
      domainsToml: 'defaults = ["s.shortlink.test", "localhost"]',
      env: { SHORTLINK_SERVER_BASEURL: 'https://api.shortlink.test/api' },
    }))
  })
  afterAll(async () => {
    await s?.stop()
    await pebble?.stop()
  })

  test('get certificates from the CA; the API host is the canonical (first) one', async () => {
    // Resolved by the CA through the test DNS; localhost is never ordered.
    await pebble.addA('api.shortlink.test', ['127.0.0.1'])
    await pebble.addA('s.shortlink.test', ['127.0.0.1'])
    // The first orders may have run before these records existed: they retry after acmeRetryMs.
    for (const name of ['api.shortlink.test', 's.shortlink.test'])
      await waitFor(`certificate for ${name}`, async () => (await peerCertificate(s.httpsPort, name, root)).ok, 15_000, 50)
    const noSni = await new Promise<string | undefined>((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port: s.httpsPort, rejectUnauthorized: false }, () => {
        resolve(String(socket.getPeerCertificate().subject?.CN))
        socket.end()
      })
    })
    expect(noSni).toBe('api.shortlink.test')
    // The API answers on its host with the CA's certificate.
    const p = Bun.spawn(
      [
        'curl',
        '-sS',
        '--resolve',
        `api.shortlink.test:${s.httpsPort}:127.0.0.1`,
        '--cacert',
        rootFile,
        '-H',
        `authorization: Bearer ${s.adminKey}`,
        `https://api.shortlink.test:${s.httpsPort}/api/domains`,
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    const body = await new Response(p.stdout).text()
    expect(await p.exited).toBe(0)
    expect(
      JSON.parse(body)
        .map((d: any) => d.slug)
        .sort(),
    ).toEqual(['localhost', 's.shortlink.test'])
    expect(s.output()).not.toContain('"name":"localhost"')
  })
})
