/**
 * The dictionary of click-event strings (`stats_values`, migration 0011): click events store
 * the id of each dimension string (os, country, referer URL, UTM values…), one or two bytes
 * instead of the string. Ids are assigned on first use and never change.
 */
import type { Database } from 'bun:sqlite'

/** Above this many cached strings the cache starts over (referer URLs are unbounded). */
const MAX_CACHED = 100_000

/** Id of a string, added to the dictionary when new (inside the caller's transaction); null stays null. */
export function createValueIds(db: Database) {
  const add = db.query('INSERT OR IGNORE INTO stats_values (value) VALUES (?)')
  const find = db.query<{ id: number }, [string]>('SELECT id FROM stats_values WHERE value = ?')
  const cache = new Map<string, number>()
  return {
    idOf(value: string | null): number | null {
      if (value === null) return null
      let id = cache.get(value)
      if (id === undefined) {
        add.run(value)
        id = find.get(value)!.id
        if (cache.size >= MAX_CACHED) cache.clear()
        cache.set(value, id)
      }
      return id
    },
    /** After a rolled-back transaction: ids it added are gone. */
    forget: () => cache.clear(),
  }
}
