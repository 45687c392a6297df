/**
 * A store port (docs/adr/0010): the SQLite store's own type with every method allowed to
 * return a promise, so the SQLite adapter stays synchronous and a PostgreSQL one may not be.
 */
export type Awaitable<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => R | Promise<R> : T[K]
}
