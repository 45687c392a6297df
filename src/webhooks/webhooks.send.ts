/**
 * One delivery attempt: a signed POST to the webhook's URL with a 10 s deadline for the whole
 * exchange, no redirect followed (a 3xx is a failure), and the answer's body read to a small
 * cap and dropped. The target's host passes the rules of `POST /qr/scan` at connect time
 * (src/qr: private, loopback and link-local addresses refused unless `[webhooks]
 * allowPrivateNetworks`), and the connection goes to the address that was checked, so a name
 * that later resolves inside the network is not delivered to. A checked address is reused for
 * a minute (the connection still goes to it, never to a new answer).
 */

import { type AddressRules, AppError, checkedAddress, LruCache, pinnedRequest } from '../shared'
import { signedHeaders } from './webhooks.sign'
import { DELIVERY_TIMEOUT_MS } from './webhooks.values'

export interface AttemptResult {
  ok: boolean
  /** The answer's status; null when none came (refused address, DNS, connection, timeout). */
  status: number | null
  /** Why it failed, for the log. */
  error: string | null
}

export interface SenderOptions {
  allowPrivateNetworks: boolean
  userAgent: string
  timeoutMs?: number
  now?: () => number
  resolveHost?: AddressRules['resolveHost']
}

/** Bytes of an answer's body read before the connection is dropped. */
export const RESPONSE_CAP_BYTES = 4096
const ADDRESS_TTL_MS = 60_000

async function drain(body: ReadableStream<Uint8Array> | null, cap: number): Promise<void> {
  if (!body) return
  const reader = body.getReader()
  let read = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return
    read += value.byteLength
    if (read >= cap) {
      await reader.cancel().catch(() => {})
      return
    }
  }
}

/** A fetch error's kind (ConnectionRefused, CERT_HAS_EXPIRED…), never its text, which may name the pinned address. */
function failure(e: unknown): string {
  const code = (e as { code?: unknown })?.code
  return typeof code === 'string' && /^[A-Za-z_]{1,40}$/.test(code) ? code : 'the connection failed'
}

export function createSender(opts: SenderOptions) {
  const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const now = opts.now ?? Date.now
  const rules: AddressRules = { allowPrivateNetworks: opts.allowPrivateNetworks, field: 'url', resolveHost: opts.resolveHost }
  const addresses = new LruCache<string | null>({ maxEntries: 1000, ttlMs: ADDRESS_TTL_MS })

  async function addressOf(url: URL): Promise<string | null> {
    const cached = addresses.get(url.hostname)
    if (cached !== undefined) return cached
    const address = await checkedAddress(url, rules)
    addresses.set(url.hostname, address)
    return address
  }

  /** Sends `body` (the envelope) as event `eventId` to `target`; never throws. */
  return async function send(target: { url: string; secret: string }, eventId: string, body: string): Promise<AttemptResult> {
    const signal = AbortSignal.timeout(timeoutMs)
    try {
      const url = new URL(target.url)
      const request = pinnedRequest(url, await addressOf(url))
      const res = await fetch(request.href, {
        method: 'POST',
        body,
        redirect: 'manual',
        signal,
        headers: {
          ...request.headers,
          'content-type': 'application/json',
          'user-agent': opts.userAgent,
          ...signedHeaders(target.secret, eventId, now(), body),
        },
        ...(request.tls ? { tls: request.tls } : {}),
      })
      await drain(res.body, RESPONSE_CAP_BYTES)
      return { ok: res.status >= 200 && res.status < 300, status: res.status, error: res.ok ? null : `answered ${res.status}` }
    } catch (e) {
      if (e instanceof AppError) return { ok: false, status: null, error: e.message }
      if (signal.aborted) return { ok: false, status: null, error: `no answer within ${timeoutMs / 1000} s` }
      return { ok: false, status: null, error: failure(e) }
    }
  }
}
export type Sender = ReturnType<typeof createSender>
