/** TLS: the server certificate (self-signed CA, files or ACME), per-domain certificates by SNI, ACME orders and renewals, the HTTPS listener. Other modules import this file only. */
export { loadServerCertificate } from './certificates'
export { type HttpsListener, startHttpsListener } from './https-listener'
export type { CertPair } from './self-signed'
export { createTls, type Tls } from './tls'
export { createTlsStore, type TlsStore, type TlsStorePort } from './tls.store'
export { createPgTlsStore } from './tls.store.pg'
