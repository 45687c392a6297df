/**
 * The click journal through the server (ADR 23), on SQLite, and on PostgreSQL when the run
 * provides one: the store refuses click rows while visits come in (on SQLite a trigger makes the
 * events engine's numbering of the link's groups fail before any event is written; on PostgreSQL a
 * rollup table is renamed away: every batch fails), so each visit, a referer of its own, ends
 * up in the journal in the data dir; the server is killed with SIGKILL; the store takes rows again
 * and the restarted server writes every visit back, each exactly once.
 */
import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { until } from './helpers/poll'
import { startServer, type TestServer } from './helpers/server'

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'

/** Makes the server's store refuse (or take again) click rows. */
async function refuseClicks(s: TestServer, refuse: boolean) {
  if (s.storeUrl) {
    const sql = new SQL(s.storeUrl, { max: 1 })
    try {
      await sql.unsafe(refuse ? 'ALTER TABLE stats_week RENAME TO stats_week_away' : 'ALTER TABLE stats_week_away RENAME TO stats_week')
    } finally {
      await sql.close()
    }
    return
  }
  const db = new Database(join(s.dir, 'data/shortlink.db'))
  db.exec('PRAGMA busy_timeout = 5000')
  db.exec(refuse ? `CREATE TRIGGER refuse_clicks BEFORE INSERT ON stats_groups BEGIN SELECT RAISE(ABORT, 'store refuses'); END` : 'DROP TRIGGER refuse_clicks')
  db.close()
}

/**
 * Visits in the data dir's journal file (each line after the header is a row; its last field is its visits). The
 * server may be appending while this reads: a last line without its newline is not whole yet and is left out.
 */
function journaled(s: TestServer): number {
  const text = readFileSync(join(s.dir, 'data/clicks.journal'), 'utf8')
  const lines = text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .slice(1)
    .filter(Boolean)
  return lines.reduce((n, line) => n + (JSON.parse(line) as number[]).at(-1)!, 0)
}

test('visits refused by the store wait in the journal, survive a kill -9, and are each stored once after a restart', async () => {
  const s = await startServer()
  const made = await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://dest.example/' }, linkOptions: { key: 'journaled' } } })
  expect(made.status).toBe(200)
  const link = (await made.json()) as { id: string; shortLink: string }
  await refuseClicks(s, true)
  const visits = 1500
  for (let i = 0; i < visits; i += 50)
    await Promise.all(
      Array.from({ length: 50 }, async (_, j) => {
        const r = await s.fetch(link.shortLink, { headers: { 'user-agent': BROWSER_UA, referer: `https://ref.example/${i + j}` }, redirect: 'manual' })
        expect(r.status).toBe(302)
      }),
    )
  // Every visit reaches the journal file (the failed writes put their rows there).
  await until(
    'every visit in the journal',
    async () => journaled(s),
    (n) => n === visits,
  )
  s.proc.kill('SIGKILL')
  await s.proc.exited
  await refuseClicks(s, false)

  const again = await startServer({ dir: s.dir })
  const count = async () => ((await (await again.api(`/statistics?linkId=${link.id}`, { key: s.adminKey })).json()) as { clicks: number }).clicks
  await until('the journal written back', count, (n) => n >= visits, 60_000)
  expect(await count()).toBe(visits)
  const stored = (await (await again.api(`/links/${link.id}`, { key: s.adminKey })).json()) as { clicks: number }
  expect(stored.clicks).toBe(visits)
  const byReferer = (await (await again.api(`/statistics?linkId=${link.id}&groupBy=referer_url`, { key: s.adminKey })).json()) as unknown[]
  expect(byReferer.length).toBe(visits) // each visit once, none merged with another, none twice
  expect(await again.stop('SIGTERM')).toBe(0)
})
