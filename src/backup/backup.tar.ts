/**
 * The archive's container: POSIX tar (ustar headers, regular files only) inside zstd, so an
 * operator can look into a backup with `zstd -dc FILE | tar -tv`. Written and read as streams
 * (a store of millions of links is gigabytes). The reader accepts only regular files whose
 * names a part claims: a crafted archive cannot name a path outside the target, a link or a
 * device.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'

const BLOCK = 512

/** One tar header for a regular file of `size` bytes named `name` (at most 100 bytes, ASCII). */
export function tarHeader(name: string, size: number, mtimeS: number): Uint8Array {
  const h = new Uint8Array(BLOCK)
  const enc = new TextEncoder()
  const put = (text: string, at: number, len: number) => h.set(enc.encode(text).subarray(0, len), at)
  const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, '0')
  if (enc.encode(name).length > 100) throw new Error(`archive member name too long: ${name}`)
  put(name, 0, 100)
  put(octal(0o600, 8), 100, 8)
  put(octal(0, 8), 108, 8)
  put(octal(0, 8), 116, 8)
  if (size < 8 ** 11) put(octal(size, 12), 124, 12)
  else {
    // GNU base-256 for members of 8 GiB and more.
    h[124] = 0x80
    let v = BigInt(size)
    for (let i = 135; i > 124; i--) {
      h[i] = Number(v & 0xffn)
      v >>= 8n
    }
  }
  put(octal(mtimeS, 12), 136, 12)
  put('        ', 148, 8)
  h[156] = 0x30 // '0': regular file
  put('ustar\u000000', 257, 8)
  let sum = 0
  for (const b of h) sum += b
  put(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8)
  return h
}

const ZEROS = new Uint8Array(BLOCK * 2)

export interface WrittenMember {
  path: string
  size: number
  sha256: string
}

/**
 * Streams the members (data-dir-relative `path`, read from `source`) then `trailer` (the manifest,
 * given the members' hashes) as one tar, chunk by chunk.
 */
export async function* tarStream(
  members: { path: string; source: string }[],
  trailer: (written: WrittenMember[]) => { path: string; bytes: Uint8Array },
): AsyncGenerator<Uint8Array> {
  const mtime = Math.floor(Date.now() / 1000)
  const written: WrittenMember[] = []
  for (const m of members) {
    const size = Bun.file(m.source).size
    yield tarHeader(m.path, size, mtime)
    const hash = createHash('sha256')
    let seen = 0
    for await (const chunk of createReadStream(m.source, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
      // A member must not change while it is archived (staging holds copies and links): a size change is an error.
      seen += chunk.length
      if (seen > size) throw new Error(`${m.path} grew while it was archived`)
      hash.update(chunk)
      yield chunk
    }
    if (seen !== size) throw new Error(`${m.path} shrank while it was archived`)
    if (size % BLOCK) yield new Uint8Array(BLOCK - (size % BLOCK))
    written.push({ path: m.path, size, sha256: hash.digest('hex') })
  }
  const last = trailer(written)
  yield tarHeader(last.path, last.bytes.length, mtime)
  yield last.bytes
  if (last.bytes.length % BLOCK) yield new Uint8Array(BLOCK - (last.bytes.length % BLOCK))
  yield ZEROS
}

function parseSize(h: Uint8Array): number {
  if (h[124]! & 0x80) {
    let v = 0n
    for (let i = 125; i < 136; i++) v = (v << 8n) | BigInt(h[i]!)
    return Number(v)
  }
  const text = new TextDecoder()
    .decode(h.subarray(124, 136))
    .replace(/[\0 ]+$/, '')
    .trim()
  if (!/^[0-7]*$/.test(text)) throw new Error('corrupt archive: bad member size')
  return text ? Number.parseInt(text, 8) : 0
}

function checksumOk(h: Uint8Array): boolean {
  const text = new TextDecoder()
    .decode(h.subarray(148, 156))
    .replace(/[\0 ]+$/, '')
    .trim()
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!
  return Number.parseInt(text, 8) === sum
}

export interface MemberSink {
  /** Where the member's bytes go; null refuses the member (the whole read fails). */
  open(path: string, size: number): Promise<FileHandle>
  /** The member was read whole: its size and SHA-256. */
  closed(member: WrittenMember): void | Promise<void>
}

/**
 * Reads a tar stream into `sink`, member by member, hashing each. Refuses anything but regular
 * files with plain relative names; `claims` decides which names are allowed at all.
 */
export async function untar(chunks: AsyncIterable<Uint8Array>, claims: (path: string) => boolean, sink: MemberSink): Promise<WrittenMember[]> {
  const out: WrittenMember[] = []
  let buf = new Uint8Array(0)
  let current: { path: string; size: number; left: number; pad: number; fh: FileHandle; hash: ReturnType<typeof createHash> } | null = null
  let ended = false
  const append = (c: Uint8Array) => {
    const next = new Uint8Array(buf.length + c.length)
    next.set(buf)
    next.set(c, buf.length)
    buf = next
  }
  try {
    for await (const chunk of chunks) {
      if (ended) continue
      append(chunk)
      for (;;) {
        if (current) {
          if (current.left > 0) {
            if (buf.length === 0) break
            const take = buf.subarray(0, Math.min(current.left, buf.length))
            await current.fh.write(take)
            current.hash.update(take)
            current.left -= take.length
            buf = buf.subarray(take.length)
            continue
          }
          if (buf.length < current.pad) break
          buf = buf.subarray(current.pad)
          await current.fh.close()
          const member = { path: current.path, size: current.size, sha256: current.hash.digest('hex') }
          out.push(member)
          await sink.closed(member)
          current = null
          continue
        }
        if (buf.length < BLOCK) break
        const h = buf.subarray(0, BLOCK)
        if (h.every((b) => b === 0)) {
          ended = true
          break
        }
        if (!checksumOk(h)) throw new Error('corrupt archive: a header checksum does not match')
        const type = h[156]
        const name = new TextDecoder().decode(h.subarray(0, 100)).replace(/\0.*$/s, '')
        const prefix = new TextDecoder().decode(h.subarray(345, 500)).replace(/\0.*$/s, '')
        if (type !== 0x30 && type !== 0) throw new Error(`refused archive member ${JSON.stringify(name)}: not a regular file`)
        if (prefix || !isPlainPath(name) || !claims(name))
          throw new Error(`refused archive member ${JSON.stringify(prefix ? `${prefix}/${name}` : name)}: not a backup path`)
        const size = parseSize(h)
        buf = buf.subarray(BLOCK)
        current = { path: name, size, left: size, pad: (BLOCK - (size % BLOCK)) % BLOCK, fh: await sink.open(name, size), hash: createHash('sha256') }
      }
    }
  } catch (e) {
    // A damaged stream or a refused header mid-member: the open member's file is closed, not left to the GC.
    await current?.fh.close().catch(() => {})
    throw e
  }
  if (current) {
    await current.fh.close()
    throw new Error(`incomplete archive: ${current.path} is cut short`)
  }
  if (!ended) throw new Error('incomplete archive: it ends before its last member')
  return out
}

/** Relative, forward slashes, no empty, `.` or `..` segments, no control characters. */
export function isPlainPath(path: string): boolean {
  if (!path || path.startsWith('/') || path.includes('\\') || [...path].some((ch) => ch.charCodeAt(0) < 0x20)) return false
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..')
}
