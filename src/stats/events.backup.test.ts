/**
 * Backups of the events store go through the server (DuckDB lets one process hold the file):
 * `EventsHandle.backup` copies it between two batches while the recorder keeps writing, and
 * `restoreEventsStore` puts the copy into a new data dir.
 */
import { expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLogger } from '../shared/log'
import { openStore } from '../store'
import { createEventsHandle, eventsPathOf } from './click-recorder'
import { restoreEventsStore } from './events.engine'
import { event, T } from './stats.test-fixtures'

test('a backup taken while batches keep coming holds exactly the batches of the SQLite copy made in its pause; it restores', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'events-backup-'))
  try {
    const dbPath = join(dir, 'data', 'shortlink.db')
    const db = openStore(dbPath)
    db.run("INSERT INTO users (id, created_at, role) VALUES ('usr_a', 0, 'member')")
    db.run(`INSERT INTO links (seq, id, user_id, domain, key, link_type, destination, match_key, data, created_at, updated_at)
            VALUES (1, 'lnk_1', 'usr_a', 's.test', 'k', 'link', 'https://d.example/', 'm', '{}', 0, 0)`)
    const events = createEventsHandle(db, dbPath, createLogger(true))
    const t0 = T('2025-05-01T10:00:00Z')
    let written = 0
    const writes: Promise<void>[] = []
    // Visits handed over all along (grouped into batches as they come): some before the backup, some after.
    for (let i = 0; i < 40; i++) {
      writes.push(events.write([event(1, t0 + i * 1000, { n: 1 })]).then(() => void written++))
      if (i === 20) {
        writes.push(
          events
            .backup(join(dir, 'events.copy'), () => {
              db.run(`VACUUM INTO '${join(dir, 'shortlink.copy')}'`)
            })
            .then((r) => {
              expect(r.bytes).toBeGreaterThan(0)
              expect(r.batch).toBeGreaterThanOrEqual(1)
            }),
        )
      }
    }
    await Promise.all(writes)
    expect(written).toBe(40)
    await events.close()
    // The copies restore into a new data dir: the same batches on both sides.
    const restored = join(dir, 'restored')
    mkdirSync(restored)
    const copyDb = openStore(join(dir, 'shortlink.copy'))
    const applied = Number(copyDb.query<{ value: string }, []>("SELECT value FROM kv WHERE key = 'events_batch'").get()!.value)
    const clicks = copyDb.query<{ clicks: number }, []>('SELECT clicks FROM links WHERE seq = 1').get()!.clicks
    copyDb.close()
    const counts = await restoreEventsStore(join(dir, 'events.copy'), eventsPathOf(join(restored, 'shortlink.db')), restored)
    // One click per event here: the copy's events, its clicks and SQLite's counters agree, batch for batch.
    expect(counts).toEqual({ events: clicks, clicks, batch: applied })
    expect(clicks).toBeGreaterThanOrEqual(1)
    expect(clicks).toBeLessThan(40)
    await expect(restoreEventsStore(join(dir, 'events.copy'), eventsPathOf(join(restored, 'shortlink.db')), restored)).rejects.toThrow('exists')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
