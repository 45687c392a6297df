/**
 * Self-signed mode: a local CA and a leaf certificate for localhost, the loopback
 * addresses and the configured names, made in pure JS (@peculiar/x509 on WebCrypto,
 * ECDSA P-256) and kept in `<dataDir>/tls`. The leaf is re-made when the names change
 * or it nears expiry; the CA is kept so a client that trusted it keeps trusting.
 */

import { X509Certificate } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { isIP } from 'node:net'
import type * as X509 from '@peculiar/x509'

type X509Lib = typeof X509

/**
 * @peculiar/x509 (with pkijs and asn1js) costs a start-up ~20 ms to evaluate; a restart
 * on fresh certificates only reads the leaf's expiry (node:crypto), so it is loaded when
 * something must be made.
 */
let x509Lib: Promise<X509Lib> | null = null
const loadX509 = () =>
  (x509Lib ??= import('@peculiar/x509').then((x509) => {
    x509.cryptoProvider.set(crypto)
    return x509
  }))

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const
const DAY = 86_400_000

export interface CertPair {
  cert: string
  key: string
}

export interface SelfSignedFiles extends CertPair {
  caCert: string
  caFile: string
}

async function exportKeyPem(x509: X509Lib, key: CryptoKey): Promise<string> {
  const der = await crypto.subtle.exportKey('pkcs8', key)
  return x509.PemConverter.encode(der, 'PRIVATE KEY')
}

async function importKeyPem(x509: X509Lib, pem: string): Promise<CryptoKey> {
  const der = x509.PemConverter.decode(pem)[0]!
  return crypto.subtle.importKey('pkcs8', der, ALG, true, ['sign'])
}

function serial(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1')
}

async function makeCa(x509: X509Lib): Promise<{ cert: X509.X509Certificate; keys: CryptoKeyPair }> {
  const keys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=shortlink local CA',
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 3650 * DAY),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })
  return { cert, keys }
}

async function makeLeaf(x509: X509Lib, names: string[], ca: { cert: X509.X509Certificate; key: CryptoKey }): Promise<CertPair> {
  const keys = (await crypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair
  const sans = names.map((n) => (isIP(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n }))
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${names[0]}`,
    issuer: ca.cert.subject,
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 397 * DAY),
    signingKey: ca.key,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(sans),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  })
  return { cert: `${cert.toString('pem')}\n${ca.cert.toString('pem')}\n`, key: await exportKeyPem(x509, keys.privateKey) }
}

export function selfSignedNames(extra: string[]): string[] {
  const names = ['localhost', '127.0.0.1', '::1', ...extra.map((n) => n.toLowerCase())]
  return [...new Set(names)]
}

export async function ensureSelfSigned(dataDir: string, names: string[]): Promise<SelfSignedFiles> {
  const dir = `${dataDir}/tls`
  mkdirSync(dir, { recursive: true })
  const p = { caCert: `${dir}/ca.pem`, caKey: `${dir}/ca-key.pem`, cert: `${dir}/cert.pem`, key: `${dir}/key.pem`, names: `${dir}/names.json` }

  const hasCa = existsSync(p.caCert) && existsSync(p.caKey)
  const wanted = JSON.stringify(names)
  const current = existsSync(p.names) ? readFileSync(p.names, 'utf8') : ''
  let fresh = current === wanted && existsSync(p.cert) && existsSync(p.key)
  if (fresh) {
    const leaf = new X509Certificate(readFileSync(p.cert, 'utf8'))
    fresh = leaf.validToDate.getTime() - Date.now() > 30 * DAY
  }
  if (hasCa && fresh) return readPair(p)

  const x509 = await loadX509()
  let ca: { cert: X509.X509Certificate; key: CryptoKey }
  if (hasCa) {
    ca = { cert: new x509.X509Certificate(readFileSync(p.caCert, 'utf8')), key: await importKeyPem(x509, readFileSync(p.caKey, 'utf8')) }
  } else {
    const made = await makeCa(x509)
    writeAtomically(p.caKey, await exportKeyPem(x509, made.keys.privateKey), 0o600)
    writeAtomically(p.caCert, `${made.cert.toString('pem')}\n`)
    ca = { cert: made.cert, key: made.keys.privateKey }
  }
  if (!fresh) {
    const leaf = await makeLeaf(x509, names, ca)
    writeAtomically(p.key, leaf.key, 0o600)
    writeAtomically(p.cert, leaf.cert)
    writeAtomically(p.names, wanted)
  }
  return readPair(p)
}

/**
 * A whole file or none: written beside its place, then renamed over it. A full disk (or a crash)
 * leaves the old file and no half key or certificate; the temp file is removed.
 */
function writeAtomically(path: string, content: string, mode = 0o644) {
  const tmp = `${path}.tmp-${process.pid}`
  try {
    writeFileSync(tmp, content, { mode })
    chmodSync(tmp, mode)
    renameSync(tmp, path)
  } catch (e) {
    rmSync(tmp, { force: true })
    // Bun's write errors name no file: the start-up message names this one.
    if (e && typeof e === 'object' && !('path' in e && (e as { path?: unknown }).path)) Object.assign(e, { path })
    throw e
  }
}

function readPair(p: { cert: string; key: string; caCert: string }): SelfSignedFiles {
  return { cert: readFileSync(p.cert, 'utf8'), key: readFileSync(p.key, 'utf8'), caCert: readFileSync(p.caCert, 'utf8'), caFile: p.caCert }
}
