/** The certificate the HTTPS listener starts with, per `tls.mode`. */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { Config, Settings } from '../config'
import { type CertPair, ensureSelfSigned, selfSignedNames } from './self-signed'

export async function loadServerCertificate(config: Config, settings: Settings): Promise<CertPair & { caFile?: string }> {
  if (config.tls.mode === 'files') {
    return readCertificateFiles(config.tls.certFile, config.tls.keyFile)
  }
  // acme mode also starts on a self-signed certificate for the canonical host until the
  // ACME subsystem has issued real ones.
  const names = selfSignedNames([settings.apiHost, ...settings.defaultDomains, ...config.tls.names])
  return ensureSelfSigned(config.server.dataDir, names)
}

/** A certificate or key file of the config that cannot be used; the message names the setting and the path. */
export class CertificateFileError extends Error {}

/** tls.mode = "files": both files read and checked before listening (Bun's own refusal says neither which file nor why). */
function readCertificateFiles(certFile: string, keyFile: string): CertPair {
  const read = (setting: string, path: string) => {
    if (!path) throw new CertificateFileError(`${setting} is not set (tls.mode = "files" needs tls.certFile and tls.keyFile)`)
    try {
      return readFileSync(path, 'utf8')
    } catch (e) {
      const code = (e as { code?: string }).code
      const why =
        code === 'ENOENT'
          ? 'no such file'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : code === 'EISDIR'
              ? 'a directory, not a file'
              : String((e as Error).message)
      throw new CertificateFileError(`${setting} ${path}: ${why}`)
    }
  }
  const cert = read('tls.certFile', certFile)
  const key = read('tls.keyFile', keyFile)
  let leaf: X509Certificate
  try {
    leaf = new X509Certificate(cert)
  } catch {
    throw new CertificateFileError(`tls.certFile ${certFile}: not a PEM certificate`)
  }
  let privateKey: KeyObject
  try {
    privateKey = createPrivateKey(key)
  } catch {
    throw new CertificateFileError(`tls.keyFile ${keyFile}: not a PEM private key (or one with a passphrase)`)
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new CertificateFileError(`tls.keyFile ${keyFile} is not the key of the certificate in tls.certFile ${certFile}`)
  return { cert, key }
}
