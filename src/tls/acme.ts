/**
 * Certificate orders with acme-client, HTTP-01 only (Bun.serve cannot answer
 * TLS-ALPN-01). The key authorization goes into `acme_challenges`, which the port-80
 * listener serves, so the answer survives a restart mid-order (and, on a shared store, any
 * node answers). The account key lives in
 * `acme_accounts` per directory URL; certificate keys are ECDSA P-256.
 */

import { readFileSync } from 'node:fs'
import type * as AcmeClient from 'acme-client'
import type { Config } from '../config'
import type { Logger } from '../shared'
import type { ChallengeStore } from './challenges'
import type { TlsStorePort } from './tls.store'

export interface IssuedCertificate {
  name: string
  cert: string
  key: string
  notBefore: number
  notAfter: number
}

export interface AcmeIssuer {
  issue(name: string): Promise<IssuedCertificate>
}

export function createAcmeIssuer(opts: { store: TlsStorePort; challenges: ChallengeStore<TlsStorePort>; config: Config; log: Logger }): AcmeIssuer {
  const { store, challenges, config, log } = opts
  const directory = config.tls.acmeDirectory
  const pollMs = config.tls.acmePollMs

  // acme-client (with axios and node-forge) is loaded on the first order: evaluating it
  // costs a start-up ~20 ms that a server without ACME work never needs.
  let library: Promise<typeof AcmeClient> | null = null
  const acmeClient = () =>
    (library ??= (async () => {
      const [acme, https] = await Promise.all([import('acme-client'), import('node:https')])
      // acme-client's axios instance is process-wide. Its defaults retry a failed request 5
      // times over 75 s and have no timeout; a failed order is retried by the caller anyway.
      const settings = (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number; retryDefaultDelay: number } }).acmeSettings
      settings.retryMaxAttempts = 2
      settings.retryDefaultDelay = 1
      acme.axios.defaults.timeout = 30_000
      if (config.tls.acmeCaFile) acme.axios.defaults.httpsAgent = new https.Agent({ ca: readFileSync(config.tls.acmeCaFile) })
      return acme
    })())

  const dropped = challenges.dropOlderThan(86_400_000)
  if (dropped instanceof Promise) dropped.catch((e) => log.warn('old acme challenges not dropped', { error: String((e as Error)?.message ?? e) }))

  let client: Promise<AcmeClient.Client> | null = null

  async function makeClient(): Promise<AcmeClient.Client> {
    const acme = await acmeClient()
    let account = await store.account(directory)
    if (!account) {
      const key = (await acme.crypto.createPrivateEcdsaKey()).toString()
      await store.insertAccount(directory, key, Date.now())
      account = { accountKey: key, accountUrl: null }
    }
    const c = new acme.Client({
      directoryUrl: directory,
      accountKey: account.accountKey,
      accountUrl: account.accountUrl ?? undefined,
      backoffMin: pollMs,
      backoffMax: pollMs * 6,
      backoffAttempts: 10,
    })
    if (!account.accountUrl) {
      const email = config.tls.acmeEmail
      await c.createAccount({ termsOfServiceAgreed: true, ...(email ? { contact: [`mailto:${email}`] } : {}) })
      await store.setAccountUrl(directory, c.getAccountUrl())
      log.info('acme account created', { directory, url: c.getAccountUrl() })
    }
    return c
  }

  function reasonOf(e: unknown): string {
    const err = e as Error & { cause?: unknown }
    // When every retry failed without a response, acme-client throws a TypeError about
    // `response.config` that hides the cause.
    if (err instanceof TypeError && /response|config/.test(err.message)) return `cannot reach the ACME server at ${directory}`
    const msg = err?.message ?? String(e)
    return msg.length > 500 ? `${msg.slice(0, 497)}...` : msg
  }

  return {
    async issue(name) {
      try {
        client ??= makeClient().catch((e) => {
          client = null
          throw e
        })
        const c = await client
        const acme = await acmeClient()
        const [key, csr] = await acme.crypto.createCsr({ commonName: name, altNames: [name] }, await acme.crypto.createPrivateEcdsaKey())
        const cert = await c.auto({
          csr,
          termsOfServiceAgreed: true,
          // The pre-check would fetch our own challenge through the system resolver;
          // the CA validates it anyway.
          skipChallengeVerification: true,
          challengePriority: ['http-01'],
          // In the store before the CA is told, so whichever node it asks can answer.
          challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
            await challenges.put(challenge.token, keyAuthorization)
          },
          challengeRemoveFn: async (_authz, challenge) => {
            await challenges.drop(challenge.token)
          },
        })
        const info = acme.crypto.readCertificateInfo(cert)
        return { name, cert, key: key.toString(), notBefore: info.notBefore.getTime(), notAfter: info.notAfter.getTime() }
      } catch (e) {
        throw new Error(reasonOf(e), { cause: e })
      }
    },
  }
}
