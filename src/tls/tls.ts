/**
 * The TLS pieces, built once at the wiring point (deps.ts) from the store and config: the
 * certificate store, the ACME challenge answers and the ACME issuer (made on first use, so
 * a server without ACME work never contacts a CA).
 */
import type { Config, Settings } from '../config'
import type { DomainService } from '../domains'
import type { Logger } from '../shared'
import type { Db } from '../store'
import { type AcmeIssuer, createAcmeIssuer } from './acme'
import { type CertStore, createCertStore } from './cert-store'
import { type ChallengeStore, createChallengeStore } from './challenges'
import { createTlsStore } from './tls.store'

export interface TlsDeps {
  db: Db
  config: Config
  settings: Settings
  domains: DomainService
  log: Logger
}

export interface Tls {
  readonly deps: Omit<TlsDeps, 'db'>
  certs: CertStore
  challenges: ChallengeStore
  issuer(): AcmeIssuer
}

export function createTls({ db, ...deps }: TlsDeps): Tls {
  const store = createTlsStore(db)
  const challenges = createChallengeStore(store)
  let issuer: AcmeIssuer | null = null
  return {
    deps,
    certs: createCertStore(store),
    challenges,
    issuer: () => (issuer ??= createAcmeIssuer({ store, challenges, config: deps.config, log: deps.log })),
  }
}
