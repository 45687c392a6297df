/**
 * The binary's click writer thread, broken on purpose (the test-only SHORTLINK_TEST_WRITER_FAULT,
 * src/stats/click-writer.faults.ts): one that never opens (as when its modules failed to
 * load, issue 24), one that exits after its first batch, one that stops answering. Each time
 * the log says so at once, and every visit of the run is counted, exactly once, and survives
 * a SIGTERM and a restart. SQLite only: on PostgreSQL batches are written inline, no thread.
 */
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { UA } from './helpers/agents'
import { until } from './helpers/poll'
import { logLines, startServer, type TestServer } from './helpers/server'

const servers: TestServer[] = []
afterAll(async () => {
  for (const s of servers) {
    await s.stop()
    rmSync(s.dir, { recursive: true, force: true })
  }
})

for (const [fault, said] of [
  ['crash@open*9', 'the click writer thread failed: test fault: the click writer crashes while opening; starting a new one'],
  ['exit@1', 'the click writer thread ended (exit code 70); starting a new one'],
  ['hang@1;answerMs=3000', 'the click writer thread did not answer a write within 3000 ms; starting a new one'],
] as const) {
  test(`SHORTLINK_TEST_WRITER_FAULT=${fault}: the log says so and every visit is counted once`, async () => {
    const s = await startServer({ env: { SHORTLINK_TEST_WRITER_FAULT: fault }, storeUrl: '' })
    servers.push(s)
    const made = await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://dest.example/' }, linkOptions: { key: 'counted' } } })
    expect(made.status).toBe(200)
    const { id } = (await made.json()) as { id: string }
    let visits = 0
    const visitWave = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await s.fetch(`https://localhost:${s.httpsPort}/counted`, { headers: { 'user-agent': UA.mac } })
        expect(r.status).toBe(302)
        visits++
      }
    }
    // Waves through the first writer, its loss and the next one; the barrier waits for each to be stored.
    for (const n of [3, 4, 5]) {
      await visitWave(n)
      await s.clicksFlushed()
    }
    const clicks = async () => ((await (await s.api(`/links/${id}`)).json()) as { clicks: number }).clicks
    expect(await clicks()).toBe(visits)
    expect(logLines(s)).toContainEqual(expect.objectContaining({ level: 'error', msg: said }))
    if (fault.startsWith('crash@open'))
      expect(logLines(s)).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'click writer: writing on the main thread from now on' }))
    await visitWave(2)
    expect(await s.stop()).toBe(0) // SIGTERM writes the last visits
    const again = await startServer({ dir: s.dir, storeUrl: '' })
    servers.push(again)
    expect(((await (await again.api(`/links/${id}`, { key: s.adminKey })).json()) as { clicks: number }).clicks).toBe(visits)
  })
}

test('a writer stuck on a batch makes /readyz say clickWriter is failing; SIGTERM writes what it holds on the main thread', async () => {
  // It would be given up in ten minutes; after 10 s unanswered it counts as stuck.
  const s = await startServer({ env: { SHORTLINK_TEST_WRITER_FAULT: 'hang@1;answerMs=600000' }, storeUrl: '' })
  servers.push(s)
  const readyz = async () => {
    const r = await s.api('/readyz', { key: null })
    return { status: r.status, body: (await r.json()) as { checks: Record<string, string> } }
  }
  expect((await readyz()).body.checks.clickWriter).toBe('ok')
  const made = await s.api('/links/link', { method: 'POST', json: { data: { url: 'https://dest.example/' }, linkOptions: { key: 'stuck' } } })
  const { id } = (await made.json()) as { id: string }
  const visitWave = async (n: number) => {
    for (let i = 0; i < n; i++) expect((await s.fetch(`https://localhost:${s.httpsPort}/stuck`, { headers: { 'user-agent': UA.mac } })).status).toBe(302)
  }
  await visitWave(3)
  await s.clicksFlushed() // the first batch is written; the next one hangs in the writer
  await visitWave(4)
  const notReady = await until('/readyz to report the stuck click writer', readyz, (r) => r.status === 503, 60_000)
  expect(notReady.body.checks).toMatchObject({ store: 'ok', listeners: 'ok', clickWriter: 'failing' })
  expect(await s.stop()).toBe(0)
  expect(logLines(s)).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'click writer: writing on the main thread from now on' }))
  const again = await startServer({ dir: s.dir, storeUrl: '' })
  servers.push(again)
  // The batch the stuck thread held failed when it was given up: its visits went to the click
  // journal (ADR 23), which the restarted server writes back. The barrier link's visit counts too;
  // this link has its 7.
  const clicks = async () => ((await (await again.api(`/links/${id}`, { key: s.adminKey })).json()) as { clicks: number }).clicks
  await until('every visit counted', clicks, (n) => n >= 7)
  expect(await clicks()).toBe(7)
  expect((await again.api('/readyz', { key: null })).status).toBe(200)
})
