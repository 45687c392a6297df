/**
 * Serves the dashboard under `/app/` on the API host: hashed files cached for a year,
 * the page itself revalidated on every load, precompressed bodies chosen by
 * Accept-Encoding, and a Content-Security-Policy that lets the page reach its own
 * origin only. Paths that are not files are the single-page app's routes.
 */
import type { Logger } from '../shared'
import { type AssetPack, buildAssetPack, embeddedPack, type PackedFile, PUBLIC_PATH } from './dashboard.pack'

export interface DashboardOptions {
  /** The API's path prefix (`/api`), handed to the page in a meta tag. */
  apiPrefix: string
  log: Logger
  /** Tests pass a pack; otherwise the embedded one, or one built from `web/app`. */
  pack?: () => Promise<AssetPack>
}

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Preact sets style attributes; no stylesheet comes from elsewhere.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

export function createDashboard(options: DashboardOptions) {
  let loading: Promise<AssetPack> | null = null
  const load = () => {
    loading ??= (options.pack ?? defaultPack)().then((pack) => withApiPrefix(pack, options.apiPrefix))
    // A failed build is retried on the next request instead of answering 503 for ever.
    loading.catch((e) => {
      options.log.error('dashboard unavailable', { error: String(e) })
      loading = null
    })
    return loading
  }

  async function handle(request: Request, path: string): Promise<Response> {
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return new Response('method not allowed\n', { status: 405, headers: { allow: 'GET, HEAD', 'content-type': 'text/plain', ...COMMON_HEADERS } })
    if (path === '/app') return new Response(null, { status: 308, headers: { location: PUBLIC_PATH } })
    let pack: AssetPack
    try {
      pack = await load()
    } catch {
      return new Response('the dashboard is not available; see the server log\n', {
        status: 503,
        headers: { 'content-type': 'text/plain', 'retry-after': '5', ...COMMON_HEADERS },
      })
    }
    const name = path.slice(PUBLIC_PATH.length)
    const file = pack.get(name)
    // A missing file name (with an extension) is a 404; anything else is a route of the app.
    if (!file && /\.[a-z0-9]+$/i.test(name)) return new Response('not found\n', { status: 404, headers: { 'content-type': 'text/plain', ...COMMON_HEADERS } })
    return serveFile(request, file ?? pack.get('index.html')!)
  }

  return { handle, warm: () => load().then(() => undefined) }
}
export type Dashboard = ReturnType<typeof createDashboard>

async function defaultPack(): Promise<AssetPack> {
  return (await embeddedPack()) ?? (await buildAssetPack())
}

function withApiPrefix(pack: AssetPack, apiPrefix: string): AssetPack {
  const index = pack.get('index.html')!
  const html = new TextDecoder().decode(index.body).replace('</head>', `<meta name="shortlink-api" content="${escapeAttr(apiPrefix)}"></head>`)
  const body = new TextEncoder().encode(html)
  const out = new Map(pack)
  out.set('index.html', { ...index, body, gzip: Bun.gzipSync(body), br: null })
  return out
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
}

function serveFile(request: Request, file: PackedFile): Response {
  const accept = request.headers.get('accept-encoding') ?? ''
  const encoding = file.br && /\bbr\b/.test(accept) ? 'br' : file.gzip && /\bgzip\b/.test(accept) ? 'gzip' : null
  const body = encoding === 'br' ? file.br! : encoding === 'gzip' ? file.gzip! : file.body
  const headers: Record<string, string> = {
    'content-type': file.type,
    'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    vary: 'accept-encoding',
    ...COMMON_HEADERS,
  }
  if (encoding) headers['content-encoding'] = encoding
  if (!file.immutable) headers['content-security-policy'] = CSP
  return new Response(request.method === 'HEAD' ? null : (body as Uint8Array<ArrayBuffer>), { headers })
}
