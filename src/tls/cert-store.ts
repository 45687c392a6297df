/**
 * ACME certificates by host name, kept in the store so a restart serves them at once. On
 * the SQLite store every answer is synchronous (the SNI list is built from it); on another
 * store they may be promises.
 */
import type { StoredCertificate, StoreResult, TlsStore, TlsStorePort } from './tls.store'

export type { StoredCertificate } from './tls.store'

/** Renew once two thirds of the lifetime have passed (Let's Encrypt: day 60 of 90). */
export function renewAt(c: Pick<StoredCertificate, 'notBefore' | 'notAfter'>): number {
  return c.notBefore + ((c.notAfter - c.notBefore) * 2) / 3
}

export interface CertStore<S extends TlsStorePort = TlsStore> {
  all(): StoreResult<S, StoredCertificate[]>
  get(name: string): StoreResult<S, StoredCertificate | null>
  put(c: Omit<StoredCertificate, 'issuedAt'>): StoreResult<S, void>
  /** True when there was one. */
  remove(name: string): StoreResult<S, boolean>
}

export function createCertStore<S extends TlsStorePort = TlsStore>(store: S): CertStore<S> {
  type R<T> = StoreResult<S, T>
  return {
    all: () => store.allCertificates() as R<StoredCertificate[]>,
    get: (name) => store.certificate(name) as R<StoredCertificate | null>,
    put: (c) => store.putCertificate(c, Date.now()) as R<void>,
    remove: (name) => store.removeCertificate(name) as R<boolean>,
  }
}
