/** Monthly partitions of `click_events` (see migration 0001): created ahead of a bulk write. */
import type { SQL } from 'bun'

/** The first millisecond (UTC) of the month holding `at`. */
export function monthStart(at: number): number {
  const d = new Date(at)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}

/** Makes sure every month from `fromAt` to `toAt` (epoch ms, inclusive) has its partition; returns their names. */
export async function ensureClickPartitions(sql: SQL, fromAt: number, toAt: number): Promise<string[]> {
  const names: string[] = []
  for (let m = monthStart(fromAt); m <= toAt; ) {
    const [row] = await sql`SELECT click_events_month(${m}::bigint) AS name`
    names.push(row.name)
    const d = new Date(m)
    m = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  }
  return names
}
