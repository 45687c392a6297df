/** The certificate the HTTPS listener starts with, per `tls.mode`. */
import { readFileSync } from 'node:fs'
import type { Config, Settings } from '../config'
import { type CertPair, ensureSelfSigned, selfSignedNames } from './self-signed'

export async function loadServerCertificate(config: Config, settings: Settings): Promise<CertPair & { caFile?: string }> {
  if (config.tls.mode === 'files') {
    return { cert: readFileSync(config.tls.certFile, 'utf8'), key: readFileSync(config.tls.keyFile, 'utf8') }
  }
  // acme mode also starts on a self-signed certificate for the canonical host until the
  // ACME subsystem has issued real ones.
  const names = selfSignedNames([settings.apiHost, ...settings.defaultDomains, ...config.tls.names])
  return ensureSelfSigned(config.server.dataDir, names)
}
