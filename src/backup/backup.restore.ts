/**
 * Rebuilds a data dir from a backup and verifies it: refuses a non-empty target, checks
 * FILE.sha256 when it lies beside FILE, writes only the members a part claims, checks every
 * member's size and SHA-256 against the manifest (which must be there: a cut-short archive
 * has none), then lets each part check what it restored (SQLite's check and row counts,
 * file bytes, certificates). On any failure the target is left as it was found.
 */
import { createHash } from 'node:crypto'
import { createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { createZstdDecompress } from 'node:zlib'
import { BACKUP_FORMAT, BACKUP_VERSION } from './backup.create'
import type { BackupPart } from './backup.parts'
import { untar, type WrittenMember } from './backup.tar'

export class RestoreRefusedError extends Error {}
export class RestoreFailedError extends Error {}

export interface RestoreResult {
  members: number
  bytes: number
  createdAt: string
  /** Whether FILE.sha256 was there and matched (without it the members' own hashes are the check). */
  archiveChecksum: 'matched' | 'absent'
  parts: string[]
}

interface Manifest {
  format: string
  version: number
  createdAt: string
  parts: Record<string, Record<string, unknown>>
  members: WrittenMember[]
}

export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) hash.update(chunk)
  return hash.digest('hex')
}

export async function restoreBackup(opts: { file: string; dataDir: string; parts: BackupPart[] }): Promise<RestoreResult> {
  const { file, dataDir, parts } = opts
  if (!existsSync(file)) throw new RestoreRefusedError(`${file}: no such file`)
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) throw new RestoreRefusedError(`${dataDir} is not empty: restore into an empty or new directory`)
  let archiveChecksum: RestoreResult['archiveChecksum'] = 'absent'
  if (existsSync(`${file}.sha256`)) {
    const expected = readFileSync(`${file}.sha256`, 'utf8').trim().split(/\s+/)[0] ?? ''
    const actual = await fileSha256(file)
    if (actual !== expected)
      throw new RestoreFailedError(`${file} does not match ${file}.sha256 (the archive is damaged or not the one the checksum was made for)`)
    archiveChecksum = 'matched'
  }
  const made = !existsSync(dataDir)
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const manifestPath = join(dataDir, '.restore-manifest.json')
  try {
    const claims = (path: string) => path === 'manifest.json' || parts.some((p) => p.claims(path))
    const stream = createReadStream(file, { highWaterMark: 1 << 20 }).pipe(createZstdDecompress())
    const written = await untar(stream as AsyncIterable<Uint8Array>, claims, {
      async open(path) {
        const target = path === 'manifest.json' ? manifestPath : join(dataDir, path)
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
        return open(target, 'wx', 0o600)
      },
      closed() {},
    }).catch((e: Error) => {
      throw new RestoreFailedError(`${file}: ${e.message}`)
    })
    if (!existsSync(manifestPath)) throw new RestoreFailedError(`${file}: no manifest (the archive is incomplete or not a shortlink backup)`)
    let manifest: Manifest
    try {
      manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest
    } catch {
      throw new RestoreFailedError(`${file}: its manifest is not readable (the archive is damaged)`)
    }
    rmSync(manifestPath)
    if (manifest.format !== BACKUP_FORMAT || manifest.version !== BACKUP_VERSION)
      throw new RestoreFailedError(`${file}: not a shortlink backup this version reads (format ${manifest.format} v${manifest.version})`)
    const got = new Map(written.filter((m) => m.path !== 'manifest.json').map((m) => [m.path, m]))
    const problems: string[] = []
    for (const m of manifest.members) {
      const w = got.get(m.path)
      if (!w) problems.push(`${m.path} is missing from the archive`)
      else if (w.sha256 !== m.sha256 || w.size !== m.size) problems.push(`${m.path} does not match its checksum`)
      got.delete(m.path)
    }
    for (const extra of got.keys()) problems.push(`${extra} is in the archive but not in its manifest`)
    // The parts check what they restored only once every member is the one the backup wrote.
    if (problems.length === 0)
      for (const part of parts) {
        try {
          problems.push(...(await part.verify(dataDir, manifest.parts[part.name] ?? {})))
        } catch (e) {
          problems.push(`${part.name}: ${(e as Error).message}`)
        }
      }
    if (problems.length) throw new RestoreFailedError(`the restored data does not verify:\n  ${problems.join('\n  ')}`)
    return {
      members: manifest.members.length,
      bytes: manifest.members.reduce((n, m) => n + m.size, 0),
      createdAt: manifest.createdAt,
      archiveChecksum,
      parts: parts.map((p) => p.name),
    }
  } catch (e) {
    // Leave the target as it was found: empty (or absent).
    if (made) rmSync(dataDir, { recursive: true, force: true })
    else for (const name of readdirSync(dataDir)) rmSync(join(dataDir, name), { recursive: true, force: true })
    throw e
  }
}
