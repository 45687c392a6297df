/** Short domains: default and custom domains (CRUD), CNAME verification, the lookups the redirect server and link validation use. Other modules import this file only. */
export { createCnameChecker } from './cname'
export { normaliseHost, toAsciiDomain } from './domains.names'
export { domainRoutes } from './domains.routes'
export { createDomainService, type DomainService } from './domains.service'
export { createDomainStore, type DomainState, type DomainStore, type DomainStorePort } from './domains.store'
export { createPgDomainStore } from './domains.store.pg'
