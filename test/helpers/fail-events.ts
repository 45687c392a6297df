/**
 * Store contract tests: from `on` a transaction that appends an event fails at its end, after the
 * event's row was written (so a change and its events are shown to commit together); `off` again.
 */
import type { Database } from 'bun:sqlite'
import type { SQL } from 'bun'

export function failEventsSqlite(db: Database, on: boolean): void {
  db.run(on ? "CREATE TEMP TRIGGER fail_events AFTER INSERT ON events BEGIN SELECT RAISE(ABORT, 'disk full'); END" : 'DROP TRIGGER IF EXISTS fail_events')
}

/** A deferred constraint trigger fails the transaction at its commit, the last moment it could. */
export async function failEventsPg(sql: SQL, on: boolean): Promise<void> {
  if (!on) return void (await sql.unsafe('DROP TRIGGER IF EXISTS fail_events ON events'))
  await sql.unsafe("CREATE OR REPLACE FUNCTION fail_events() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$")
  await sql.unsafe('CREATE CONSTRAINT TRIGGER fail_events AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail_events()')
}
