/**
 * Pieces of the click journal tests: a SQLite store file with links (its events in the events
 * engine's DuckDB file beside it), distinct visits, and a child process running a real recorder
 * on that store (killed with SIGKILL by the tests).
 */
import type { Database } from 'bun:sqlite'
import { dirname } from 'node:path'
import { until } from '../../test/helpers/poll'
import type { Logger } from '../shared/log'
import { openStore } from '../store'
import { createClickRecorder, createEventsHandle, eventsPathOf, type RecorderOptions, type Visit } from './click-recorder'
import { inspectEventsStore } from './events.engine'

export const LINK_SEQS = [1, 2, 3]

export const quietLog: Logger = { info() {}, warn() {}, error() {} }

/** A migrated store at `path` with users and the links of LINK_SEQS. */
export function storeWithLinks(path: string): Database {
  const db = openStore(path)
  db.run("INSERT OR IGNORE INTO users (id, created_at) VALUES ('u1', 1)")
  for (const seq of LINK_SEQS)
    db.run(
      `INSERT OR IGNORE INTO links (seq, id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
       VALUES (?, ?, 'u1', 'localhost', ?, 'link', 'https://dest.example/', ?, '{}', 1, 1)`,
      [seq, `lnk_${seq}`, `k${seq}`, `m${seq}`],
    )
  return db
}

/**
 * Makes the store refuse every batch (as a full disk or a broken store would), or accept them
 * again: numbering a link's groups fails, before any event is written (the events engine numbers
 * each link once per process, so this holds for links it has not written yet).
 */
export function refuseClicks(db: Database, refuse: boolean): void {
  if (refuse) db.run(`CREATE TRIGGER IF NOT EXISTS refuse_clicks BEFORE INSERT ON stats_groups BEGIN SELECT RAISE(ABORT, 'store refuses'); END`)
  else db.run('DROP TRIGGER IF EXISTS refuse_clicks')
}

/** A recorder on the store file `path` as a node runs it: the events engine's worker, the journal beside the file. */
export function recorderOn(db: Database, path: string, opts: RecorderOptions = {}) {
  return createClickRecorder(createEventsHandle(db, path, quietLog), quietLog, { journalDir: dirname(path), ...opts })
}

/** Visit `i`: a referer URL of its own, so each needs a row of its own (nothing merges). */
export function distinctVisit(i: number, at = Date.now() - 60_000): Visit {
  return {
    linkSeq: LINK_SEQS[i % LINK_SEQS.length]!,
    domain: 'localhost',
    at: at + i,
    scan: i % 5 === 0,
    referer: 'ref.example',
    refererUrl: `https://ref.example/${i}`,
    visitor: { id: 1, os: 'IOS', browser: 'Safari', device: 'Mobile' },
    geo: { id: 1, continent: 'Europe', country: 'DE', region: 'Bavaria', city: 'Munich' },
    utm: { id: 0, source: null, medium: null, campaign: null, term: null, content: null },
  }
}

/** The links' counters (SQLite): readable while a recorder runs. */
export function storedCounters(db: Database): number {
  return db.query<{ n: number | null }, []>('SELECT sum(clicks) AS n FROM links').get()!.n ?? 0
}

/** Clicks in the store: events (sum of n, in the DuckDB file: no recorder may hold it) and the links' counters. */
export async function storedClicks(db: Database, path: string): Promise<{ events: number; counters: number }> {
  const events = (await inspectEventsStore(eventsPathOf(path), dirname(path))).clicks
  return { events, counters: storedCounters(db) }
}

/** Lets the store take batches again, waits until `recorder` has written all it held (memory and journal), stops it: the clicks stored. */
export async function acceptAndDrain(recorder: ReturnType<typeof recorderOn>, db: Database, path: string) {
  refuseClicks(db, false)
  recorder.start()
  await until(
    'every visit written',
    async () => recorder.pendingCount(),
    (n) => n === 0,
  )
  await recorder.stop()
  return storedClicks(db, path)
}

/**
 * A recorder in its own process, so a test can kill it with SIGKILL. Usage:
 *   bun click-journal.test-fixtures.ts record <db path> <visits>: records the visits (the store refuses them:
 *     they go to the journal), waits until the journal file holds every one, prints `journaled <n>`, and stays up.
 *   bun click-journal.test-fixtures.ts drain <db path> <chunk bytes>: starts a recorder, which writes the
 *     journal to the store chunk by chunk; prints `started`, and stays up.
 */
if (import.meta.main) {
  const [mode, path, arg] = process.argv.slice(2)
  const db = storeWithLinks(path!)
  if (mode === 'record') {
    const recorder = recorderOn(db, path!, { maxHeldRows: 50, flushMs: 100 })
    recorder.start()
    for (let i = 0; i < Number(arg); i++) recorder.record(distinctVisit(i))
    // Two flushes: the held rows' write fails and they join the journal; the second writes the journal's buffer to the file.
    await recorder.flush()
    await recorder.flush()
    console.log(`journaled ${recorder.pendingCount()}`)
  } else {
    const recorder = recorderOn(db, path!, { journalChunkBytes: Number(arg) })
    recorder.start()
    console.log('started')
  }
  setInterval(() => {}, 60_000)
}
