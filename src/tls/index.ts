/** TLS: the server certificate (self-signed CA, files or ACME), per-domain certificates by SNI, ACME orders and renewals (one per domain across nodes, under a lease lock), the HTTPS listener. Other modules import this file only. */

export { acmeLockKey } from './certificate-manager'
export { CertificateFileError, loadServerCertificate } from './certificates'
export { asListenError, ListenError } from './exclusive-port'
export { type HttpsListener, startHttpsListener } from './https-listener'
export type { CertPair } from './self-signed'
export { createTls, type Tls, type TlsDeps } from './tls'
export { createTlsStore, type TlsStore, type TlsStorePort } from './tls.store'
export { CERTIFICATES_CHANNEL, createPgTlsStore, type PgTlsStoreOptions } from './tls.store.pg'
