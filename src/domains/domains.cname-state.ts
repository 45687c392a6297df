/**
 * The CNAME verification state machine of a custom domain: each check's outcome (from the
 * DNS checker, cname.ts) moves the domain's status and schedules the next check with
 * backoff; a temporary DNS failure (`pending`) never changes a decided status. The verify
 * endpoint checks at once, and a valid name with a certificate order waiting on backoff
 * starts the order now. Writes go through the domain store; the domain service's cache
 * and listeners learn of them through `reload` and `changed`.
 */
import type { Logger } from '../shared'
import type { CnameChecker, CnameOutcome } from './cname'
import type { CnameState, DomainState, DomainStorePort } from './domains.store'

const MAX_BACKOFF_MS = 6 * 3600_000

/** Delay before attempt `attempts + 1`: base, 2x base, 4x base, ... capped at 6 h. */
export function backoffMs(baseMs: number, attempts: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempts - 1), MAX_BACKOFF_MS)
}

/**
 * The CNAME state after a check at `t`: valid resets the attempts and is not re-checked on
 * a timer (it is, before each certificate renewal); anything else counts an attempt (a
 * manual check counts as the first) and schedules the next one.
 */
export function nextCnameState(
  cur: Pick<DomainState, 'cnameStatus' | 'cnameAttempts'>,
  outcome: CnameOutcome,
  manual: boolean,
  t: number,
  retryMs: number,
): CnameState {
  const attempts = outcome.status === 'valid' ? 0 : manual ? 1 : cur.cnameAttempts + 1
  return {
    cnameStatus: outcome.status === 'pending' ? cur.cnameStatus : outcome.status,
    cnameDetail: outcome.detail,
    cnameCheckedAt: t,
    cnameAttempts: attempts,
    cnameNextAt: outcome.status === 'valid' ? null : t + backoffMs(retryMs, attempts),
  }
}

export function createCnameVerification(opts: {
  store: Pick<DomainStorePort, 'get' | 'updateCname' | 'updateSsl'>
  cname: CnameChecker
  /** First retry delay; doubles per attempt. */
  retryMs: number
  log: Logger
  now: () => number
  /** Re-reads a domain into the service's cache after a write: its state, null when gone. */
  reload(slug: string): DomainState | null | Promise<DomainState | null>
  /** Tells the service's listeners that a domain's CNAME state moved. */
  changed(slug: string): void
}) {
  const { store, cname, log, now } = opts
  /** One check per domain at a time: concurrent callers share it. */
  const inflight = new Map<string, Promise<DomainState | null>>()

  /** Records a CNAME outcome with backoff; a temporary failure keeps the current status. */
  async function record(slug: string, outcome: CnameOutcome, manual: boolean): Promise<DomainState | null> {
    const cur = await store.get(slug)
    if (!cur) return null
    await store.updateCname(slug, nextCnameState(cur, outcome, manual, now(), opts.retryMs))
    if (outcome.status !== cur.cnameStatus) log.info('domain cname', { domain: slug, from: cur.cnameStatus, to: outcome.status, detail: outcome.detail })
    return opts.reload(slug)
  }

  async function checkOnce(slug: string, manual: boolean): Promise<DomainState | null> {
    let outcome: CnameOutcome
    try {
      outcome = await cname.check(slug)
    } catch (e) {
      outcome = { status: 'pending', detail: `DNS check failed: ${(e as Error).message}` }
    }
    const s = await record(slug, outcome, manual)
    if (s) opts.changed(slug)
    return s
  }

  /** Runs one CNAME check (shared by concurrent callers) and records it. */
  function check(slug: string, manual = false): Promise<DomainState | null> {
    const running = inflight.get(slug)
    if (running) return running
    const p = checkOnce(slug, manual).finally(() => inflight.delete(slug))
    inflight.set(slug, p)
    return p
  }

  return {
    check,
    /**
     * The verify endpoint: checks now; when the name is valid and a certificate order waits
     * on its backoff, the next order starts at once. The domain's state, null when gone.
     */
    async verify(slug: string): Promise<DomainState | null> {
      const s = await check(slug, true)
      if (!s) return null
      if (s.cnameStatus === 'valid' && (s.sslStatus === 'failed' || s.sslStatus === 'pending') && s.sslNextAt !== null) {
        await store.updateSsl(slug, { sslStatus: s.sslStatus, sslError: s.sslError, sslAttempts: 0, sslNextAt: null })
        const fresh = await opts.reload(slug)
        opts.changed(slug)
        return fresh
      }
      return s
    },
    backoffMs: (attempts: number) => backoffMs(opts.retryMs, attempts),
  }
}
export type CnameVerification = ReturnType<typeof createCnameVerification>
