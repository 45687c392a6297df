/** Connecting to PostgreSQL with Bun's own client (`Bun.SQL`): no other driver, no ORM. */
import { SQL } from 'bun'

/** A `[store] url` (or `--to`) that does not name a PostgreSQL database. */
export class StoreUrlError extends Error {}

/** Checks that `url` is `postgres://` or `postgresql://` with a host; returns it parsed. */
export function parsePostgresUrl(url: string): URL {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    throw new StoreUrlError(`not a URL: ${redactUrl(url)} (expected postgres://user:password@host:port/database)`)
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new StoreUrlError(`not a PostgreSQL URL: ${redactUrl(url)} (expected postgres://user:password@host:port/database)`)
  if (!u.hostname) throw new StoreUrlError(`no host in ${redactUrl(url)}`)
  return u
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@')
  }
}

export interface ConnectOptions {
  /** Connections in the pool (Bun's default is 10). */
  max?: number
  /** Seconds to wait for a connection before failing (default 10). */
  connectionTimeout?: number
}

/**
 * A pool for `url`. Note for the stores built on it: int8 (bigint) columns come back as
 * strings (Bun.SQL's default); cast in SQL (`::int`, `::float8`) or convert with Number().
 */
export function connectPostgres(url: string, opts: ConnectOptions = {}): SQL {
  parsePostgresUrl(url)
  return new SQL(url, { max: opts.max ?? 10, connectionTimeout: opts.connectionTimeout ?? 10 })
}
