/**
 * The TLS pieces, built once at the wiring point (deps.ts) from the store and config: the
 * certificate store, the ACME challenge answers and the ACME issuer (made on first use, so
 * a server without ACME work never contacts a CA). On PostgreSQL the nodes share the store
 * and take a lease lock per domain before ordering (docs/adr/0010, CertMagic's model).
 */
import type { Config, Settings } from '../config'
import type { DomainService, DomainStorePort } from '../domains'
import type { Logger } from '../shared'
import type { Db, LeaseLocks } from '../store'
import { type AcmeIssuer, createAcmeIssuer } from './acme'
import { type CertStore, createCertStore } from './cert-store'
import { type ChallengeStore, createChallengeStore } from './challenges'
import { createTlsStore, type TlsStorePort } from './tls.store'

interface TlsCommonDeps {
  config: Config
  settings: Settings
  domains: DomainService<DomainStorePort>
  log: Logger
}

/**
 * `store` (any adapter) with `locks` on PostgreSQL, so one node per domain orders; or, the
 * SQLite shorthand, `db` (one node: no locks).
 */
export type TlsDeps = TlsCommonDeps & ({ store: TlsStorePort; locks?: LeaseLocks } | { db: Db })

export interface Tls {
  readonly deps: TlsCommonDeps
  certs: CertStore<TlsStorePort>
  challenges: ChallengeStore<TlsStorePort>
  /** Lease locks shared by the nodes (PostgreSQL), or none (one node). */
  locks: LeaseLocks | null
  issuer(): AcmeIssuer
  /**
   * The port-80 answer to `pathname` when it is an ACME HTTP-01 challenge path, else null.
   * This node's own tokens answer from memory; others are read from the store (on
   * PostgreSQL another node's order, so the answer is a promise).
   */
  answerChallenge(pathname: string): Response | Promise<Response> | null
}

const CHALLENGE_PATH = /^\/\.well-known\/acme-challenge\/([A-Za-z0-9_-]+)$/
/** ACME tokens are 43 characters (RFC 8555: at least 128 bits, base64url); longer ones are never looked up. */
const MAX_TOKEN_LENGTH = 256

const unknownToken = () => new Response('unknown challenge token\n', { status: 404, headers: { 'content-type': 'text/plain' } })
const keyAuthorization = (answer: string | null) =>
  answer === null ? unknownToken() : new Response(answer, { headers: { 'content-type': 'application/octet-stream' } })

export function createTls(input: TlsDeps): Tls {
  const { config, settings, domains, log } = input
  const deps = { config, settings, domains, log }
  const store: TlsStorePort = 'db' in input ? createTlsStore(input.db) : input.store
  const challenges = createChallengeStore<TlsStorePort>(store)
  let issuer: AcmeIssuer | null = null
  return {
    deps,
    certs: createCertStore<TlsStorePort>(store),
    challenges,
    locks: 'locks' in input ? (input.locks ?? null) : null,
    issuer: () => (issuer ??= createAcmeIssuer({ store, challenges, config, log })),
    answerChallenge(pathname) {
      const m = CHALLENGE_PATH.exec(pathname)
      if (!m) return null
      const token = m[1]!
      if (token.length > MAX_TOKEN_LENGTH) return unknownToken()
      const answer = challenges.answer(token)
      if (!(answer instanceof Promise)) return keyAuthorization(answer)
      return answer.then(keyAuthorization, (e) => {
        log.warn('acme challenge not read from the store', { error: String((e as Error)?.message ?? e) })
        return new Response('challenge store unavailable\n', { status: 503, headers: { 'content-type': 'text/plain', 'retry-after': '1' } })
      })
    },
  }
}
