/**
 * Link writes on a store file while another connection commits (the click writer's thread does,
 * every second): a write that reads first (is the key taken? has the row changed?) must wait its
 * turn, not fail with "database is locked". A deferred transaction fails at once when another
 * connection commits between its read and its write (SQLITE_BUSY_SNAPSHOT, busy_timeout does not
 * apply); an immediate one takes the write lock first and waits under busy_timeout.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore } from '../store'
import { createLinkStore, type NewLinkRow } from './links.store'

const dir = mkdtempSync(join(tmpdir(), 'links-busy-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('creates, updates and deletes keep working while another connection commits all the time', async () => {
  const path = join(dir, 'shortlink.db')
  const db = openStore(path)
  db.query("INSERT INTO users (id, created_at) VALUES ('usr_a', 0)").run()
  const store = createLinkStore(db)
  const row = (i: number): NewLinkRow => ({
    id: `lnk_${i}`,
    user_id: 'usr_a',
    domain: 'localhost',
    key: `k${i}`,
    link_type: 'link',
    destination: `https://shop${i}.example.com/`,
    match_key: `https://shop${i}.example.com/`,
    data: JSON.stringify({ url: `https://shop${i}.example.com/` }),
    options: '{}',
    qr_options: null,
    password_hash: null,
    expires_at: null,
    archived: 0,
    created_at: i,
    updated_at: i,
  })
  const counted = store.createLink(row(0), [], 'k0')!

  // Another connection, in a thread of its own, commits a click count again and again (the click writer commits
  // once a second): a commit between a write's read and its write is the case, not a lock held without a break.
  const worker = join(dir, 'committer.ts')
  writeFileSync(
    worker,
    `import { Database } from 'bun:sqlite'
const db = new Database(${JSON.stringify(path)})
db.exec('PRAGMA busy_timeout = 5000')
const bump = db.transaction(() => db.query('UPDATE links SET clicks = clicks + 1 WHERE seq = ${counted.seq}').run())
let commits = 0
let running = true
self.onmessage = () => { running = false }
const loop = () => { if (!running) return postMessage(commits); bump(); commits++; setTimeout(loop, 0) }
postMessage('started')
loop()
`,
  )
  const committer = new Worker(worker)
  const messages: unknown[] = []
  const next = () => new Promise<unknown>((resolve) => committer.addEventListener('message', (e) => resolve(e.data), { once: true }))
  expect(await next()).toBe('started')
  const failures: string[] = []
  for (let i = 1; i <= 90; i++) {
    try {
      const made = store.createLink(row(i), [], `k${i}`)
      const base = made!
      store.saveLinks([{ row: { ...base, destination: `https://moved${i}.example.com/` }, base, searchText: `k${i}` }])
      if (i % 3 === 0) store.softDeleteLinks([base.seq], i)
    } catch (e) {
      failures.push(String(e))
    }
    // Let the committer's thread run between writes, as requests arrive between the writer's batches.
    if (i % 20 === 0) await Bun.sleep(0)
  }
  const stopped = next()
  committer.postMessage('stop')
  messages.push(await stopped)
  committer.terminate()
  expect(failures).toEqual([])
  expect(messages[0]).toBeGreaterThan(0)
  expect(store.count({})).toBe(1 + 90 - 30)
  db.close()
})
