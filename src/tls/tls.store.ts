/**
 * The TLS store (docs/adr/0010): ACME certificates by host name, the ACME account per
 * directory URL and the HTTP-01 challenge answers. This is the SQLite adapter; its type with
 * awaitable results is the port (`TlsStorePort`) the PostgreSQL adapter implements.
 */
import type { Awaitable } from '../shared'
import type { Db } from '../store'

export interface StoredCertificate {
  name: string
  /** PEM chain: leaf first, then intermediates. */
  cert: string
  key: string
  notBefore: number
  notAfter: number
  issuedAt: number
}

export interface AcmeAccount {
  accountKey: string
  accountUrl: string | null
}

export interface CertificateRow {
  name: string
  cert: string
  key: string
  not_before: number
  not_after: number
  issued_at: number
}

export const toCert = (r: CertificateRow): StoredCertificate => ({
  name: r.name,
  cert: r.cert,
  key: r.key,
  notBefore: r.not_before,
  notAfter: r.not_after,
  issuedAt: r.issued_at,
})

export function createTlsStore(db: Db) {
  const all = db.query<CertificateRow, []>('SELECT * FROM tls_certificates ORDER BY name')
  const one = db.query<CertificateRow, [string]>('SELECT * FROM tls_certificates WHERE name = ?')
  const put = db.query(
    `INSERT INTO tls_certificates (name, cert, key, not_before, not_after, issued_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET cert = excluded.cert, key = excluded.key, not_before = excluded.not_before,
       not_after = excluded.not_after, issued_at = excluded.issued_at`,
  )
  const remove = db.query('DELETE FROM tls_certificates WHERE name = ?')

  const putChallenge = db.query(
    'INSERT INTO acme_challenges (token, key_authorization, created_at) VALUES (?, ?, ?) ON CONFLICT (token) DO UPDATE SET key_authorization = excluded.key_authorization',
  )
  const dropChallenge = db.query('DELETE FROM acme_challenges WHERE token = ?')
  const answer = db.query<{ key_authorization: string }, [string]>('SELECT key_authorization FROM acme_challenges WHERE token = ?')
  const dropOlder = db.query('DELETE FROM acme_challenges WHERE created_at < ?')

  const accountOf = db.query<{ account_key: string; account_url: string | null }, [string]>(
    'SELECT account_key, account_url FROM acme_accounts WHERE directory = ?',
  )
  const insertAccount = db.query('INSERT INTO acme_accounts (directory, account_key, account_url, created_at) VALUES (?, ?, NULL, ?)')
  const setAccountUrl = db.query('UPDATE acme_accounts SET account_url = ? WHERE directory = ?')

  return {
    /** Every stored certificate, by name. */
    allCertificates: (): StoredCertificate[] => all.all().map(toCert),
    certificate: (name: string): StoredCertificate | null => {
      const r = one.get(name)
      return r ? toCert(r) : null
    },
    putCertificate: (c: Omit<StoredCertificate, 'issuedAt'>, now: number): void => void put.run(c.name, c.cert, c.key, c.notBefore, c.notAfter, now),
    /** True when there was one. */
    removeCertificate: (name: string): boolean => remove.run(name).changes > 0,

    /** A second answer for the same token replaces the first (its created_at stays). */
    putChallenge: (token: string, keyAuthorization: string, now: number): void => void putChallenge.run(token, keyAuthorization, now),
    dropChallenge: (token: string): void => void dropChallenge.run(token),
    /** The key authorization for `token`, or null when no order is waiting on it. */
    challengeAnswer: (token: string): string | null => answer.get(token)?.key_authorization ?? null,
    dropChallengesBefore: (createdBefore: number): void => void dropOlder.run(createdBefore),

    /** The ACME account of a directory URL, or null before the first order. */
    account: (directory: string): AcmeAccount | null => {
      const r = accountOf.get(directory)
      return r ? { accountKey: r.account_key, accountUrl: r.account_url } : null
    },
    insertAccount: (directory: string, accountKey: string, now: number): void => void insertAccount.run(directory, accountKey, now),
    setAccountUrl: (directory: string, accountUrl: string): void => void setAccountUrl.run(accountUrl, directory),
  }
}
export type TlsStore = ReturnType<typeof createTlsStore>
/** The TLS store port: the SQLite store's type with awaitable results. */
export type TlsStorePort = Awaitable<TlsStore>

/** A result that is synchronous when the store `S` is (the SQLite one), else maybe a promise. */
export type StoreResult<S, T> = S extends TlsStore ? T : T | Promise<T>

/** `f(value)`, at once when `value` is not a promise: keeps a synchronous store's path free of promises. */
export function then<T, R>(value: T | Promise<T>, f: (v: T) => R): R | Promise<R> {
  return value instanceof Promise ? value.then(f) : f(value)
}
