/**
 * ACME HTTP-01 challenge answers, kept in the store: the issuer writes them, the port-80
 * listener answers `/.well-known/acme-challenge/<token>` from them.
 */
import type { Db } from '../store'

export function createChallengeStore(db: Db) {
  const put = db.query(
    'INSERT INTO acme_challenges (token, key_authorization, created_at) VALUES (?, ?, ?) ON CONFLICT (token) DO UPDATE SET key_authorization = excluded.key_authorization',
  )
  const drop = db.query('DELETE FROM acme_challenges WHERE token = ?')
  const answer = db.query<{ key_authorization: string }, [string]>('SELECT key_authorization FROM acme_challenges WHERE token = ?')
  const dropOlder = db.query('DELETE FROM acme_challenges WHERE created_at < ?')
  return {
    put: (token: string, keyAuthorization: string) => void put.run(token, keyAuthorization, Date.now()),
    drop: (token: string) => void drop.run(token),
    /** The key authorization for `token`, or null when no order is waiting on it. */
    answer: (token: string) => answer.get(token)?.key_authorization ?? null,
    /** Left over by orders interrupted by a restart; their orders are long dead. */
    dropOlderThan: (ms: number) => void dropOlder.run(Date.now() - ms),
  }
}
export type ChallengeStore = ReturnType<typeof createChallengeStore>
