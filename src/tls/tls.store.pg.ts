/**
 * The TLS store on PostgreSQL (docs/adr/0010): the SQLite store's methods and results, in
 * PostgreSQL's SQL against migration 0001. bigint columns are cast to float8 (epoch ms fit
 * exactly), because Bun.SQL returns int8 as strings. A certificate saved or removed is
 * published on the `certificates` channel with its host name, in the same transaction, so
 * every node's HTTPS listener re-reads it without a restart.
 */
import type { SQL } from 'bun'
import type { InvalidationBus } from '../store'
import { type AcmeAccount, type CertificateRow, type StoredCertificate, type TlsStorePort, toCert } from './tls.store'

const CERT_COLUMNS = 'name, cert, key, not_before::float8 AS not_before, not_after::float8 AS not_after, issued_at::float8 AS issued_at'

/** The invalidation channel of certificates; the key is the host name. */
export const CERTIFICATES_CHANNEL = 'certificates'

export interface PgTlsStoreOptions {
  /** Announces a changed certificate to every node (the invalidation bus); none: nobody else is told. */
  publish?: InvalidationBus['publish']
}

export function createPgTlsStore(sql: SQL, { publish }: PgTlsStoreOptions = {}): TlsStorePort {
  return {
    async allCertificates(): Promise<StoredCertificate[]> {
      // COLLATE "C": SQLite's order (by code point), whatever the database's locale.
      const rows = await sql.unsafe(`SELECT ${CERT_COLUMNS} FROM tls_certificates ORDER BY name COLLATE "C"`)
      return (rows as CertificateRow[]).map(toCert)
    },
    async certificate(name: string): Promise<StoredCertificate | null> {
      const [row] = await sql.unsafe(`SELECT ${CERT_COLUMNS} FROM tls_certificates WHERE name = $1`, [name])
      return row ? toCert(row as CertificateRow) : null
    },
    async putCertificate(c: Omit<StoredCertificate, 'issuedAt'>, now: number): Promise<void> {
      await sql.begin(async (tx) => {
        await tx`INSERT INTO tls_certificates (name, cert, key, not_before, not_after, issued_at)
        VALUES (${c.name}, ${c.cert}, ${c.key}, ${c.notBefore}, ${c.notAfter}, ${now})
        ON CONFLICT (name) DO UPDATE SET cert = excluded.cert, key = excluded.key, not_before = excluded.not_before,
          not_after = excluded.not_after, issued_at = excluded.issued_at`
        await publish?.(tx, CERTIFICATES_CHANNEL, c.name)
      })
    },
    async removeCertificate(name: string): Promise<boolean> {
      return sql.begin(async (tx) => {
        const rows = await tx`DELETE FROM tls_certificates WHERE name = ${name} RETURNING 1`
        if (rows.length > 0) await publish?.(tx, CERTIFICATES_CHANNEL, name)
        return rows.length > 0
      })
    },

    async putChallenge(token: string, keyAuthorization: string, now: number): Promise<void> {
      await sql`INSERT INTO acme_challenges (token, key_authorization, created_at) VALUES (${token}, ${keyAuthorization}, ${now})
        ON CONFLICT (token) DO UPDATE SET key_authorization = excluded.key_authorization`
    },
    async dropChallenge(token: string): Promise<void> {
      await sql`DELETE FROM acme_challenges WHERE token = ${token}`
    },
    async challengeAnswer(token: string): Promise<string | null> {
      const [row] = await sql`SELECT key_authorization FROM acme_challenges WHERE token = ${token}`
      return (row?.key_authorization as string | undefined) ?? null
    },
    async dropChallengesBefore(createdBefore: number): Promise<void> {
      await sql`DELETE FROM acme_challenges WHERE created_at < ${createdBefore}`
    },

    async account(directory: string): Promise<AcmeAccount | null> {
      const [row] = await sql`SELECT account_key, account_url FROM acme_accounts WHERE directory = ${directory}`
      return row ? { accountKey: row.account_key as string, accountUrl: (row.account_url as string | null) ?? null } : null
    },
    async insertAccount(directory: string, accountKey: string, now: number): Promise<void> {
      await sql`INSERT INTO acme_accounts (directory, account_key, account_url, created_at) VALUES (${directory}, ${accountKey}, NULL, ${now})`
    },
    async setAccountUrl(directory: string, accountUrl: string): Promise<void> {
      await sql`UPDATE acme_accounts SET account_url = ${accountUrl} WHERE directory = ${directory}`
    },
  }
}
