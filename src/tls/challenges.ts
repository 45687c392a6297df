/**
 * ACME HTTP-01 challenge answers, kept in the store: the issuer writes them, the port-80
 * listener answers `/.well-known/acme-challenge/<token>` from them. A put is in the store
 * before it resolves, so on a shared store (PostgreSQL) any node answers before the CA is
 * told; this node's own answers are also kept in memory. On the SQLite store every call
 * is synchronous (the port-80 listener answers without a promise).
 */
import { type StoreResult, type TlsStore, type TlsStorePort, then } from './tls.store'

export interface ChallengeStore<S extends TlsStorePort = TlsStore> {
  put(token: string, keyAuthorization: string): StoreResult<S, void>
  drop(token: string): StoreResult<S, void>
  /** The key authorization for `token`, or null when no order is waiting on it. */
  answer(token: string): StoreResult<S, string | null>
  /** Left over by orders interrupted by a restart; their orders are long dead. */
  dropOlderThan(ms: number): StoreResult<S, void>
}

export function createChallengeStore<S extends TlsStorePort = TlsStore>(store: S): ChallengeStore<S> {
  type R<T> = StoreResult<S, T>
  const mine = new Map<string, string>()
  return {
    put: (token, keyAuthorization) => then(store.putChallenge(token, keyAuthorization, Date.now()), () => void mine.set(token, keyAuthorization)) as R<void>,
    drop: (token) => {
      mine.delete(token)
      return store.dropChallenge(token) as R<void>
    },
    answer: (token) => (mine.get(token) ?? store.challengeAnswer(token)) as R<string | null>,
    dropOlderThan: (ms) => store.dropChallengesBefore(Date.now() - ms) as R<void>,
  }
}
