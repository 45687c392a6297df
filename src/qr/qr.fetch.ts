/**
 * Fetching an image the caller names (scan input, logos, frames) without turning the
 * server into a proxy into its own network: the host is resolved first and every
 * address must be public (unless the operator allows private networks), each redirect
 * is re-checked, the body is capped while it streams, and the whole fetch has a deadline.
 * The connection goes to the address that was checked (the URL's host replaced by it, the
 * Host header and the TLS server name kept), so a second DNS answer cannot point it
 * elsewhere (DNS rebinding).
 */
import { AppError, checkedAddress, isPrivateAddress, parameterError, pinnedRequest, readCapped } from '../shared'
import { isJpeg, isPng } from './qr.decode'

export type ImageKind = 'png' | 'jpeg' | 'svg'

export interface FetchedImage {
  bytes: Uint8Array
  kind: ImageKind
}

export interface FetchLimits {
  allowPrivateNetworks: boolean
  maxBytes: number
  timeoutMs: number
  maxRedirects: number
  kinds: ImageKind[]
  /** Field named in error messages. */
  field: string
  /** Which resolved addresses are refused; default: private, loopback, link-local and reserved ones. */
  isRefusedAddress?: (ip: string) => boolean
  /** The DNS lookup (all addresses of a host); tests substitute their own. */
  resolveHost?: (host: string) => Promise<string[]>
}

export { isPrivateAddress }

const gateway = (message: string) => new AppError('bad_gateway', message)

/** Fetches an image under the limits; fetch problems are 502 bad_gateway, unusable content 422. */
export async function fetchImage(rawUrl: string, limits: FetchLimits): Promise<FetchedImage> {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    throw parameterError(`'${limits.field}' must be an absolute http(s) URL`)
  }
  const deadline = AbortSignal.timeout(limits.timeoutMs)
  try {
    for (let hop = 0; ; hop++) {
      const request = pinnedRequest(url, await checkedAddress(url, limits))
      let res: Response
      try {
        res = await fetch(request.href, {
          redirect: 'manual',
          signal: deadline,
          headers: { ...request.headers, accept: 'image/png,image/jpeg,image/svg+xml;q=0.8,*/*;q=0.1' },
          ...(request.tls ? { tls: request.tls } : {}),
        })
      } catch (e) {
        if (deadline.aborted) throw gateway(`fetching ${url.host} timed out after ${limits.timeoutMs / 1000} s`)
        throw gateway(`could not fetch ${url.host}: ${connectionFailure(e)}`)
      }
      if (res.status >= 300 && res.status < 400 && res.headers.has('location')) {
        await res.body?.cancel().catch(() => {})
        if (hop >= limits.maxRedirects) throw gateway(`more than ${limits.maxRedirects} redirects`)
        url = new URL(res.headers.get('location')!, url)
        continue
      }
      if (!res.ok) {
        await res.body?.cancel().catch(() => {})
        throw gateway(`${url.host} answered HTTP ${res.status}`)
      }
      const bytes = await readImage(res, limits)
      const kind = sniffImage(bytes)
      if (!kind || !limits.kinds.includes(kind))
        throw parameterError(`'${limits.field}' is not a ${limits.kinds.map((k) => k.toUpperCase()).join(' or ')} image`)
      return { bytes, kind }
    }
  } catch (e) {
    if (e instanceof AppError) throw e
    if (deadline.aborted) throw gateway(`fetching the image timed out after ${limits.timeoutMs / 1000} s`)
    throw gateway(`could not fetch the image: ${connectionFailure(e)}`)
  }
}

/** A fetch error's kind (ConnectionRefused, CERT_HAS_EXPIRED…) without its text, which may name the pinned address. */
function connectionFailure(e: unknown): string {
  const code = (e as { code?: unknown })?.code
  return typeof code === 'string' && /^[A-Za-z_]{1,40}$/.test(code) ? code : 'the connection failed'
}

async function readImage(res: Response, limits: FetchLimits): Promise<Uint8Array> {
  const tooBig = () => parameterError(`'${limits.field}' the image is larger than ${limits.maxBytes / 1024 / 1024} MB`)
  const declared = Number(res.headers.get('content-length') ?? NaN)
  if (declared > limits.maxBytes) {
    await res.body?.cancel().catch(() => {})
    throw tooBig()
  }
  if (!res.body) return new Uint8Array()
  const bytes = await readCapped(res.body, limits.maxBytes)
  if (!bytes) throw tooBig()
  return bytes
}

export function sniffImage(b: Uint8Array): ImageKind | null {
  if (isPng(b)) return 'png'
  if (isJpeg(b)) return 'jpeg'
  const head = Buffer.from(b.subarray(0, 1024)).toString('utf8').trimStart()
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(head)) return 'svg'
  return null
}
