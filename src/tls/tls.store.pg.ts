/**
 * The TLS store on PostgreSQL (docs/adr/0010): the SQLite store's methods and results, in
 * PostgreSQL's SQL against migration 0001. bigint columns are cast to float8 (epoch ms fit
 * exactly), because Bun.SQL returns int8 as strings.
 */
import type { SQL } from 'bun'
import { type AcmeAccount, type CertificateRow, type StoredCertificate, type TlsStorePort, toCert } from './tls.store'

const CERT_COLUMNS = 'name, cert, key, not_before::float8 AS not_before, not_after::float8 AS not_after, issued_at::float8 AS issued_at'

export function createPgTlsStore(sql: SQL): TlsStorePort {
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
      await sql`INSERT INTO tls_certificates (name, cert, key, not_before, not_after, issued_at)
        VALUES (${c.name}, ${c.cert}, ${c.key}, ${c.notBefore}, ${c.notAfter}, ${now})
        ON CONFLICT (name) DO UPDATE SET cert = excluded.cert, key = excluded.key, not_before = excluded.not_before,
          not_after = excluded.not_after, issued_at = excluded.issued_at`
    },
    async removeCertificate(name: string): Promise<boolean> {
      const rows = await sql`DELETE FROM tls_certificates WHERE name = ${name} RETURNING 1`
      return rows.length > 0
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
