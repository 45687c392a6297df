/**
 * One check of one URL, as the contract says: HEAD, then GET when HEAD answers 405 or 501;
 * up to 5 redirects followed, each hop's host under the address rules of POST /qr/scan
 * (src/shared/address.ts: resolved and judged, then the connection pinned to the judged
 * address); a refused hop is not requested and the check is `refused` (the URL stays
 * unknown). Fails on a network or TLS error, a timeout, or a final 404, 410 or 5xx; any
 * other answer passes. No body is read: a GET's body is cancelled as soon as its headers
 * are in. The whole check (every request of it) has one deadline.
 */
import { type AddressRules, AppError, checkedAddress, pinnedRequest } from '../shared'
import type { Outcome } from './link-health.rules'

/** Redirects followed; the answer after the last one is judged as it is. */
export const MAX_REDIRECTS = 5

/** Where a hop waits for its host's turn (at most 2 requests at a time per host); answers the release. */
export type HostTurn = (host: string) => Promise<() => void>

export interface CheckOptions {
  timeoutMs: number
  allowPrivateNetworks: boolean
  /** `shortlink-health/1 (+<baseUrl>)` */
  userAgent: string
  /** The first hop's turn is already held by the caller (the pool dispatched it for its host). */
  turn: HostTurn
  firstTurnHeld?: () => void
  /** Ends the check early (the checker stops): answered as a timeout would be, and not recorded by the caller. */
  signal?: AbortSignal
  resolveHost?: AddressRules['resolveHost']
  /** Tests: which resolved addresses are refused (default: private, loopback, link-local and reserved ones). */
  isRefusedAddress?: AddressRules['isRefusedAddress']
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

export const isFailingStatus = (status: number) => status === 404 || status === 410 || status >= 500

const fail = (httpStatus: number | null, error: string | null): Outcome => ({ result: 'fail', httpStatus, error })

/** A fetch error as words that never carry the pinned address: the error's code (ConnectionRefused, CERT_HAS_EXPIRED…). */
function connectionFailure(e: unknown): string {
  const code = (e as { code?: unknown })?.code
  if (typeof code !== 'string' || !/^[A-Za-z0-9_]{1,60}$/.test(code)) return 'the connection failed'
  return /CERT|SSL|TLS|SELF_SIGNED|HOSTNAME|ALTNAME/i.test(code) ? `TLS error: ${code}` : `could not connect: ${code}`
}

export async function checkUrl(raw: string, o: CheckOptions): Promise<Outcome> {
  const timeout = AbortSignal.timeout(o.timeoutMs)
  const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout
  const rules: AddressRules = {
    allowPrivateNetworks: o.allowPrivateNetworks,
    field: 'destination',
    resolveHost: o.resolveHost,
    isRefusedAddress: o.isRefusedAddress,
  }
  const timedOut = () => fail(null, `no answer within ${o.timeoutMs / 1000} s`)
  let held: (() => void) | undefined = o.firstTurnHeld
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    held?.()
    return fail(null, 'not a URL')
  }
  try {
    for (let hop = 0; ; hop++) {
      const release = held ?? (await waitTurn(o.turn, url.hostname, signal))
      held = undefined
      let status: number
      let location: string | null
      try {
        let address: string | null
        try {
          address = await checkedAddress(url, rules)
        } catch (e) {
          if (e instanceof AppError && e.code === 'parameter_error') return { result: 'refused', httpStatus: null, error: e.message }
          if (e instanceof AppError) return fail(null, e.message) // the name does not resolve
          throw e
        }
        const target = pinnedRequest(url, address)
        const send = async (method: 'HEAD' | 'GET') => {
          const res = await fetch(target.href, {
            method,
            redirect: 'manual',
            signal,
            headers: { ...target.headers, 'user-agent': o.userAgent, accept: '*/*' },
            ...(target.tls ? { tls: target.tls } : {}),
          })
          // Nothing of a body is needed: the status and Location say everything.
          await res.body?.cancel().catch(() => {})
          return res
        }
        let res = await send('HEAD')
        if (res.status === 405 || res.status === 501) res = await send('GET')
        status = res.status
        location = res.headers.get('location')
      } finally {
        release()
      }
      if (REDIRECTS.has(status) && location !== null && hop < MAX_REDIRECTS) {
        let next: URL
        try {
          next = new URL(location, url)
        } catch {
          return { result: 'pass', httpStatus: status, error: null }
        }
        // A redirect into an app or another scheme: the server that sent it is up.
        if (next.protocol !== 'http:' && next.protocol !== 'https:') return { result: 'pass', httpStatus: status, error: null }
        url = next
        continue
      }
      return isFailingStatus(status) ? fail(status, null) : { result: 'pass', httpStatus: status, error: null }
    }
  } catch (e) {
    held?.()
    if (signal.aborted) return timedOut()
    return fail(null, connectionFailure(e))
  }
}

/** The host's turn, or the deadline. */
function waitTurn(turn: HostTurn, host: string, signal: AbortSignal): Promise<() => void> {
  signal.throwIfAborted()
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    turn(host).then((release) => {
      signal.removeEventListener('abort', onAbort)
      if (signal.aborted) {
        release()
        reject(signal.reason)
      } else resolve(release)
    }, reject)
  })
}
