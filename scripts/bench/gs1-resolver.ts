/**
 * Resolver latency on a domain with 100,000 GS1 products, in process through the redirect handler
 * the server uses (what the service adds to a request; TLS and sockets are the same for every
 * path): GS1 URIs of random products (cache misses at first, then hits; with lots and link types)
 * against the ordinary short link, in alternating rounds. Prints p50/p99 per side (µs) as
 * min | median | max over the rounds.
 *   bun scripts/bench/gs1-resolver.ts [--products 100000] [--rounds 9] [--requests 20000]
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildConfig } from '../../src/config/config.load'
import { createDeps } from '../../src/deps'
import { checkDigitOf } from '../../src/gs1'
import { redirectHandlerFor } from '../../src/redirect/redirect.test-fixtures'
import { createLogger } from '../../src/shared/log'
import { arg } from './args'

const products = Number(arg('products', '100000'))
const rounds = Number(arg('rounds', '9'))
const requests = Number(arg('requests', '20000'))
const dir = mkdtempSync(join(tmpdir(), 'gs1-bench-'))
const deps = createDeps(buildConfig({ server: { dataDir: dir } }, {}), join(dir, 'store.db'), createLogger(true))
const now = Date.now()
const gtins: string[] = []
const insert = deps.db.prepare(
  `INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, options, created_at, updated_at) VALUES (?, 'usr_admin', 'localhost', ?, 'gs1', ?, ?, ?, '{}', ?, ?)`,
)
deps.db.transaction(() => {
  for (let i = 0; i < products; i++) {
    const body = String(950600200000 + i)
    const gtin = `0${body}${checkDigitOf(body)}`
    gtins.push(gtin)
    const url = `https://brand.example/p/${i}`
    const data = {
      gtin,
      url,
      links: [
        { linkType: 'gs1:pip', url: `${url}/pip`, lang: 'en' },
        { linkType: 'gs1:pip', url: `${url}/fr`, lang: 'fr' },
      ],
      lots: [{ lot: `L${i % 97}`, url: `${url}/lot` }],
    }
    insert.run(`lnk_bench${i}`, gtin, url, `gs1:${gtin} ${url}`, JSON.stringify(data), now, now)
  }
})()
await deps.links.create({ userId: 'usr_admin', role: 'admin', keyId: null }, 'link', {
  data: { url: 'https://example.com/landing' },
  linkOptions: { key: 'bench' },
})
const redirects = redirectHandlerFor(deps, { storedClicks: deps.links.storedClicks })
deps.recorder.start()
const UA = {
  'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1',
  'accept-language': 'fr-FR,fr;q=0.9',
}

async function time(paths: () => string): Promise<{ p50: number; p99: number }> {
  const samples = new Float64Array(requests)
  for (let i = 0; i < requests; i++) {
    const path = paths()
    const q = path.indexOf('?')
    const t0 = performance.now()
    const request = new Request(`https://localhost${path}`, { headers: UA })
    const res = await redirects.handle(request, q < 0 ? path : path.slice(0, q), q < 0 ? '' : path.slice(q + 1), 'localhost', () => '192.0.2.1')
    samples[i] = (performance.now() - t0) * 1000
    if (res.status !== 302 && res.status !== 307) throw new Error(`${path}: ${res.status}`)
  }
  samples.sort()
  return { p50: samples[requests >> 1]!, p99: samples[Math.floor(requests * 0.99)]! }
}
const pick = () => gtins[(Math.random() * gtins.length) | 0]!
const gs1Path = () => {
  const r = Math.random()
  return r < 0.5 ? `/01/${pick()}?qr=1` : r < 0.8 ? `/01/${pick()}/10/L${(Math.random() * 97) | 0}` : `/01/${pick()}?linkType=gs1:pip`
}
const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return `${s[0]!.toFixed(1)} | ${s[s.length >> 1]!.toFixed(1)} | ${s.at(-1)!.toFixed(1)}`
}
console.log(`${products} products; ${rounds} alternating rounds of ${requests} requests; load ${(await Bun.file('/proc/loadavg').text()).trim()}`)
const plain = { p50: [] as number[], p99: [] as number[] }
const gs1 = { p50: [] as number[], p99: [] as number[] }
for (let r = 0; r < rounds; r++) {
  for (const side of r % 2 ? ['gs1', 'plain'] : ['plain', 'gs1']) {
    const t = side === 'plain' ? await time(() => '/bench') : await time(gs1Path)
    const into = side === 'plain' ? plain : gs1
    into.p50.push(t.p50)
    into.p99.push(t.p99)
  }
}
console.log(`ordinary short link  p50 µs ${stat(plain.p50)}   p99 µs ${stat(plain.p99)}`)
console.log(`GS1 URI (100k GTINs) p50 µs ${stat(gs1.p50)}   p99 µs ${stat(gs1.p99)}`)
console.log(`link cache: ${JSON.stringify(redirects.cacheSize())}`)
await deps.recorder.stop()
process.exit(0)
