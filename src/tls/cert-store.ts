/** ACME certificates by host name, kept in the store so a restart serves them at once. */
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

interface Row {
  name: string
  cert: string
  key: string
  not_before: number
  not_after: number
  issued_at: number
}

const toCert = (r: Row): StoredCertificate => ({
  name: r.name,
  cert: r.cert,
  key: r.key,
  notBefore: r.not_before,
  notAfter: r.not_after,
  issuedAt: r.issued_at,
})

/** Renew once two thirds of the lifetime have passed (Let's Encrypt: day 60 of 90). */
export function renewAt(c: Pick<StoredCertificate, 'notBefore' | 'notAfter'>): number {
  return c.notBefore + ((c.notAfter - c.notBefore) * 2) / 3
}

export function createCertStore(db: Db) {
  const all = db.query<Row, []>('SELECT * FROM tls_certificates ORDER BY name')
  const one = db.query<Row, [string]>('SELECT * FROM tls_certificates WHERE name = ?')
  const put = db.query(
    `INSERT INTO tls_certificates (name, cert, key, not_before, not_after, issued_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET cert = excluded.cert, key = excluded.key, not_before = excluded.not_before,
       not_after = excluded.not_after, issued_at = excluded.issued_at`,
  )
  const remove = db.query('DELETE FROM tls_certificates WHERE name = ?')
  return {
    all: () => all.all().map(toCert),
    get: (name: string) => {
      const r = one.get(name)
      return r ? toCert(r) : null
    },
    put: (c: Omit<StoredCertificate, 'issuedAt'>) => put.run(c.name, c.cert, c.key, c.notBefore, c.notAfter, Date.now()),
    remove: (name: string) => remove.run(name).changes > 0,
  }
}
export type CertStore = ReturnType<typeof createCertStore>
