/**
 * Scheduled rounds over a real SQLite store and real destinations on loopback: every link's
 * URL checked once per round, pages walked, and a hanging host with many URLs holding back
 * none of another host's.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type Destination, startDestination } from '../../test/helpers/destination'
import { until } from '../../test/helpers/poll'
import { createLogger } from '../shared'
import { openStore } from '../store'
import { createLinkHealth } from './link-health.service'
import { createHealthStore } from './link-health.store'

let slow: Destination
let fast: Destination
beforeAll(() => {
  slow = startDestination('127.0.0.1')
  fast = startDestination('127.0.0.2')
})
afterAll(() => {
  slow.stop()
  fast.stop()
})

test('a round walks every page; a host that hangs on 40 URLs holds back the 30 URLs of another host by one deadline at most', async () => {
  const db = openStore(':memory:')
  db.exec("INSERT INTO users (id, created_at, role) VALUES ('usr_a', 0, 'admin')")
  const insert = db.query(
    `INSERT INTO links (id, user_id, domain, key, link_type, destination, match_key, data, options, created_at, updated_at)
     VALUES (?, 'usr_a', 'localhost', ?, 'link', ?, ?, ?, '{}', 0, 0)`,
  )
  // The hanging host's links come first in the walk (which may start anywhere and wraps around).
  const urls = [...Array.from({ length: 40 }, (_, i) => `${slow.origin}/hang/${i}`), ...Array.from({ length: 30 }, (_, i) => `${fast.origin}/ok/${i}`)]
  for (const [i, url] of urls.entries()) {
    if (url.includes('/hang/')) slow.set(new URL(url).pathname, 'hang')
    insert.run(`lnk_${i}`, `k${i}`, url, url, JSON.stringify({ url }))
  }
  const health = createLinkHealth({
    store: createHealthStore(db),
    settings: { baseUrl: 'https://sl.test/api' },
    everyMs: 60_000,
    timeoutMs: 1_000,
    allowPrivateNetworks: true,
    log: createLogger(true),
    rounds: { pageSize: 7, maxQueued: 20, spread: 0 },
    slowHostQueue: 5,
  })
  health.start()
  try {
    const checked = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM health_urls WHERE url LIKE ? || '%' AND checked_at IS NOT NULL")
    await until(
      'the fast host checked',
      async () => checked.get(fast.origin)!.n,
      (n) => n === 30,
    )
    // Queued behind the 40 hanging URLs, two at a time, the fast host would come after all 40 were
    // asked (20 deadlines); the hanging host is known slow after one deadline and keeps 5 URLs
    // queued, so it was asked 2 or 4 times by then (12 leaves a busy machine five deadlines).
    expect(slow.requests().length).toBeLessThanOrEqual(12)
    expect(fast.requests()).toHaveLength(30)
    expect(new Set(fast.requests().map((r) => r.path)).size).toBe(30)
    // Once its first checks ran out of time, the hanging host keeps 2 running and 5 queued, no more.
    await until(
      'the hanging host cut to its share',
      async () => health.pending(),
      (n) => n <= 2 + 5,
    )
    // Two at a time on the hanging host: never a third request within a deadline of two before it.
    const at = slow.requests().map((r) => r.at)
    for (let i = 2; i < at.length; i++) expect(at[i]! - at[i - 2]!).toBeGreaterThanOrEqual(900)
  } finally {
    await health.stop()
    db.close()
  }
})
