import { expect, test } from 'bun:test'
import { createDiskFullLog } from './disk-full'
import { diskFull, isDiskFull, orStoreUnavailable } from './errors'
import type { Logger } from './log'

test('a full disk is said when a kind of write first fails, then once a minute with the failures meanwhile, and once when it is over', () => {
  const lines: { msg: string; fields?: Record<string, unknown> }[] = []
  const log: Logger = { info: (msg, fields) => void lines.push({ msg, fields }), warn() {}, error: (msg, fields) => void lines.push({ msg, fields }) }
  let t = 0
  const disk = createDiskFullLog(log, { now: () => t })
  const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
  for (let i = 0; i < 100; i++) {
    disk.report('api', full)
    t += 100 // ten requests a second for ten seconds
  }
  disk.report('clicks', full) // another kind of write: said at once
  for (let i = 0; i < 10; i++) disk.report('clicks', full)
  t += 60_000
  disk.report('api', full) // a minute on
  disk.recovered('clicks')
  disk.recovered('api') // said once
  expect(lines.map((l) => [l.msg.slice(0, 20), l.fields?.failedWrites ?? l.fields?.write])).toEqual([
    ['the disk is full: wr', { api: 1 }],
    ['the disk is full: wr', { api: 99, clicks: 1 }],
    ['the disk is full: wr', { clicks: 10, api: 1 }],
    ['there is room on the', 'clicks'],
  ])
})

test("SQLITE_FULL, ENOSPC, EDQUOT, PostgreSQL disk_full and DuckDB's IO error for it are a full disk, answered 503 with Retry-After; other errors are not", () => {
  for (const e of [
    { code: 'SQLITE_FULL' },
    { code: 'ENOSPC' },
    { code: 'EDQUOT' },
    { errno: '53100' },
    { code: 'SQLITE_IOERR_WRITE', message: 'No space left on device' },
    new Error('IO Error: Could not write file "/data/events.duckdb.wal": No space left on device'),
    new Error('WriteFailedError: Error: TransactionContext Error: Failed to commit: Could not write file "/data/events.duckdb.wal": No space left on device'),
  ])
    expect(isDiskFull(e)).toBe(true)
  for (const e of [
    { code: 'SQLITE_BUSY' },
    { code: 'EACCES' },
    { code: 'SQLITE_IOERR_READ', message: 'disk I/O error' },
    new Error('IO Error: Could not read file'),
    null,
    'ENOSPC',
  ])
    expect(isDiskFull(e)).toBe(false)
  const answered = orStoreUnavailable(Object.assign(new Error('no space'), { code: 'ENOSPC' }))
  expect(answered).toEqual(diskFull())
  expect(diskFull()).toMatchObject({ code: 'service_unavailable', status: 503, headers: { 'Retry-After': '30' } })
})
