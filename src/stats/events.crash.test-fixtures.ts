/**
 * Run as its own process by events.engine.test.ts: writes three batches of clicks through the
 * events engine and kills itself with SIGKILL right after the events of batch `killAt`
 * committed in DuckDB, before their counters reach SQLite.
 */
import { openStore } from '../store'
import { openEventsEngine } from './events.engine'
import { event, T } from './stats.test-fixtures'

const [dir, killAt] = process.argv.slice(2)
const db = openStore(`${dir}/shortlink.db`)
const engine = await openEventsEngine(db, {
  path: `${dir}/events.duckdb`,
  dataDir: dir!,
  threads: 1,
  afterEventsCommitted: (batch) => {
    if (batch === Number(killAt)) process.kill(process.pid, 'SIGKILL')
  },
})
const t0 = T('2025-05-01T10:00:00Z')
for (let b = 1; b <= 3; b++) await engine.write([event(1, t0 + b * 1000, { n: b }), event(2, t0 + b * 1000 + 1)])
await engine.close()
