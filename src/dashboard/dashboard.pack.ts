/**
 * The dashboard's files as one pack: built from `web/app` by Bun.build (hashed names,
 * minified, split), each file stored with its gzip and brotli forms so serving never
 * compresses. The compiled binary embeds the pack (scripts/build.ts); `bun src/main.ts`
 * builds it from source on first use.
 */
import { join } from 'node:path'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'

export interface PackedFile {
  type: string
  body: Uint8Array
  gzip: Uint8Array | null
  br: Uint8Array | null
  /** Hashed names never change content: cached for a year. */
  immutable: boolean
}
export type AssetPack = Map<string, PackedFile>

/** Where the browser sees the files; chunks under /app/ cannot collide with short-link keys at the root. */
export const PUBLIC_PATH = '/app/'
const SOURCE_ENTRY = join(import.meta.dir, '../../web/app/index.html')

/** Smaller than this, compression is not worth a header. */
const COMPRESS_ABOVE = 512

export async function buildAssetPack(entry = SOURCE_ENTRY): Promise<AssetPack> {
  const result = await Bun.build({
    entrypoints: [entry],
    minify: true,
    splitting: true,
    publicPath: PUBLIC_PATH,
    target: 'browser',
    define: { 'process.env.NODE_ENV': '"production"' },
    naming: { entry: '[name]-[hash].[ext]', chunk: '[name]-[hash].[ext]', asset: '[name]-[hash].[ext]' },
  })
  if (!result.success) throw new Error(`dashboard build failed: ${result.logs.map(String).join('\n')}`)
  const pack: AssetPack = new Map()
  for (const output of result.outputs) {
    const name = output.path.replace(/^\.\//, '')
    const body = new Uint8Array(await output.arrayBuffer())
    const isHtml = name.endsWith('.html')
    pack.set(isHtml ? 'index.html' : name, {
      type: output.type,
      body,
      ...compressed(body, output.type),
      immutable: !isHtml,
    })
  }
  if (!pack.has('index.html')) throw new Error('dashboard build produced no index.html')
  return pack
}

function compressed(body: Uint8Array, type: string): Pick<PackedFile, 'gzip' | 'br'> {
  const compressible = /^(text\/|application\/(json|javascript)|image\/svg)/.test(type)
  if (!compressible || body.length < COMPRESS_ABOVE) return { gzip: null, br: null }
  return {
    gzip: gzipSync(body, { level: 9 }),
    br: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
  }
}

/** One JSON document; bytes as base64 (the pack is embedded once and decoded once at start). */
export function encodePack(pack: AssetPack): string {
  const b64 = (u: Uint8Array | null) => (u ? Buffer.from(u).toString('base64') : null)
  return JSON.stringify([...pack].map(([name, f]) => ({ name, type: f.type, immutable: f.immutable, body: b64(f.body), gzip: b64(f.gzip), br: b64(f.br) })))
}

export function decodePack(json: string): AssetPack {
  const raw = JSON.parse(json) as { name: string; type: string; immutable: boolean; body: string; gzip: string | null; br: string | null }[]
  const bytes = (s: string | null) => (s === null ? null : new Uint8Array(Buffer.from(s, 'base64')))
  return new Map(raw.map((f) => [f.name, { type: f.type, immutable: f.immutable, body: bytes(f.body)!, gzip: bytes(f.gzip), br: bytes(f.br) }]))
}

/** The pack the compiled binary carries (scripts/build.ts passes `dist/dashboard.pack` to the compiler), if any. */
export async function embeddedPack(): Promise<AssetPack | null> {
  const blob = Bun.embeddedFiles.find((f) => /^dashboard(-[a-z0-9]+)?\.pack$/.test((f as Blob & { name: string }).name))
  return blob ? decodePack(await blob.text()) : null
}
