/**
 * Readiness: a list of named checks, each answering true when its part can serve. The store,
 * the migrations and the listeners are added by the wiring; any other part adds its own with
 * one line (`readiness.add('clickWriter', () => recorder.health().ok)`). A check that throws,
 * or takes longer than CHECK_TIMEOUT_MS, is failing. Nothing of why is shown (no internals).
 */

export type Check = () => boolean | Promise<boolean>

export interface ReadinessReport {
  ready: boolean
  checks: Record<string, 'ok' | 'failing'>
}

export interface Readiness {
  /** Adds a check under `name` (replacing one of that name); returns its removal. */
  add(name: string, check: Check): () => void
  report(): Promise<ReadinessReport>
}

/** A check slower than this is failing: a probe must answer in time, whatever hangs. */
export const CHECK_TIMEOUT_MS = 2000

export function createReadiness(): Readiness {
  const checks = new Map<string, Check>()
  return {
    add(name, check) {
      checks.set(name, check)
      return () => {
        if (checks.get(name) === check) checks.delete(name)
      }
    },
    async report() {
      const entries = await Promise.all([...checks].map(async ([name, check]) => [name, await passes(check)] as const))
      const out: ReadinessReport['checks'] = {}
      for (const [name, ok] of entries) out[name] = ok ? 'ok' : 'failing'
      return { ready: entries.every(([, ok]) => ok), checks: out }
    },
  }
}

async function passes(check: Check): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    const answer = check()
    if (!(answer instanceof Promise)) return answer === true
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS)
    })
    return (await Promise.race([answer, late])) === true
  } catch {
    return false
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The store's check: `ping` reaches the store (SELECT 1). One ping at a time, and an answer is
 * reused for `reuseMs`, so probes and scrapes from many places cost the store one query a second.
 */
export function storeCheck(ping: () => unknown, { reuseMs = 1000, now = Date.now }: { reuseMs?: number; now?: () => number } = {}): Check {
  let last: { at: number; ok: boolean } | null = null
  let running: Promise<boolean> | null = null
  return () => {
    if (last && now() - last.at < reuseMs) return last.ok
    running ??= passes(async () => {
      await ping()
      return true
    }).then((ok) => {
      last = { at: now(), ok }
      running = null
      return ok
    })
    return running
  }
}
