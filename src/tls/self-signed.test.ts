import { afterEach, describe, expect, test } from 'bun:test'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureSelfSigned, selfSignedNames } from './self-signed'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
function dataDir() {
  const d = mkdtempSync(join(tmpdir(), 'shortlink-tls-'))
  dirs.push(d)
  return d
}

describe('self-signed certificates', () => {
  test('a restart with the same names keeps the certificate; the leaf is signed by the kept CA', async () => {
    const dir = dataDir()
    const names = selfSignedNames(['links.example'])
    const first = await ensureSelfSigned(dir, names)
    const again = await ensureSelfSigned(dir, names)
    expect(again).toEqual(first)
    const leaf = new X509Certificate(first.cert)
    expect(leaf.checkIssued(new X509Certificate(first.caCert))).toBe(true)
    expect(leaf.subjectAltName).toContain('DNS:links.example')
    expect(leaf.subjectAltName).toContain('IP Address:127.0.0.1')
  })

  test('new names make a new leaf from the same CA', async () => {
    const dir = dataDir()
    const first = await ensureSelfSigned(dir, selfSignedNames([]))
    const renamed = await ensureSelfSigned(dir, selfSignedNames(['other.example']))
    expect(renamed.caCert).toBe(first.caCert)
    expect(renamed.cert).not.toBe(first.cert)
    expect(new X509Certificate(renamed.cert).subjectAltName).toContain('DNS:other.example')
    expect(new X509Certificate(renamed.cert).checkIssued(new X509Certificate(first.caCert))).toBe(true)
  })

  test('a lost CA is made again; the leaf stays until its names change or it nears expiry', async () => {
    const dir = dataDir()
    const names = selfSignedNames([])
    const first = await ensureSelfSigned(dir, names)
    unlinkSync(join(dir, 'tls/ca.pem'))
    const again = await ensureSelfSigned(dir, names)
    expect(again.caCert).not.toBe(first.caCert)
    expect(again.cert).toBe(first.cert)
  })
})
