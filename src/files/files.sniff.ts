/**
 * File type from the content's first bytes (magic numbers), never from the name or the
 * declared Content-Type: an upload called `cat.png` that is really an HTML page must not
 * be served back as an image. Only the allow-list below is accepted.
 */

export interface SniffedType {
  mimeType: string
  extension: string
}

export const ALLOWED_TYPES = {
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  webm: 'video/webm',
} as const
export type AllowedExtension = keyof typeof ALLOWED_TYPES

/** How many leading bytes `sniffType` needs at most (SVG may open with a long XML prologue). */
export const SNIFF_BYTES = 64 * 1024

const ascii = (b: Uint8Array, at: number, s: string) => {
  if (b.length < at + s.length) return false
  for (let i = 0; i < s.length; i++) if (b[at + i] !== s.charCodeAt(i)) return false
  return true
}
const bytesAt = (b: Uint8Array, at: number, sig: number[]) => sig.every((v, i) => b[at + i] === v)
const type = (extension: AllowedExtension): SniffedType => ({ extension, mimeType: ALLOWED_TYPES[extension] })

/** The allowed type of `head` (the first bytes of a file), or null when it is none of them. */
export function sniffType(head: Uint8Array): SniffedType | null {
  const b = head
  if (bytesAt(b, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return type('png')
  if (bytesAt(b, 0, [0xff, 0xd8, 0xff])) return type('jpg')
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return type('gif')
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return type('webp')
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WAVE')) return type('wav')
  if (ascii(b, 0, '%PDF-')) return type('pdf')
  if (ascii(b, 0, 'OggS')) return isAudioOgg(b) ? type('ogg') : null
  if (ascii(b, 0, 'ID3') || isMp3Frame(b, 0)) return type('mp3')
  if (ascii(b, 4, 'ftyp')) return isoMediaType(b)
  if (bytesAt(b, 0, [0x1a, 0x45, 0xdf, 0xa3])) return isWebm(b) ? type('webm') : null
  if (isSvg(b)) return type('svg')
  return null
}

/** MPEG audio frame header: 11 sync bits, a defined version and a layer (ADTS AAC has layer 0). */
function isMp3Frame(b: Uint8Array, at: number): boolean {
  if (b.length < at + 4 || b[at] !== 0xff) return false
  const b1 = b[at + 1]!
  const b2 = b[at + 2]!
  const version = (b1 >> 3) & 3
  const layer = (b1 >> 1) & 3
  const bitrate = b2 >> 4
  const rate = (b2 >> 2) & 3
  return (b1 & 0xe0) === 0xe0 && version !== 1 && layer !== 0 && bitrate !== 15 && rate !== 3
}

/** Ogg carrying Vorbis, Opus or FLAC audio (Theora video is not on the allow-list). */
function isAudioOgg(b: Uint8Array): boolean {
  const first = new TextDecoder('latin1').decode(b.subarray(0, Math.min(b.length, 128)))
  return first.includes('\x01vorbis') || first.includes('OpusHead') || first.includes('\x7fFLAC')
}

/** ISO base media (MP4 family): audio-only brands are m4a, the rest of the family is mp4. */
function isoMediaType(b: Uint8Array): SniffedType | null {
  const major = new TextDecoder('latin1').decode(b.subarray(8, 12))
  if (['M4A ', 'M4B ', 'M4P ', 'F4A '].includes(major)) return type('m4a')
  const known = ['isom', 'iso2', 'iso4', 'iso5', 'iso6', 'mp41', 'mp42', 'avc1', 'M4V ', 'M4VH', 'M4VP', 'dash', 'MSNV', 'f4v ', 'mmp4']
  return known.includes(major) ? type('mp4') : null
}

/** Matroska's EBML header with DocType "webm" (other Matroska files are not allowed). */
function isWebm(b: Uint8Array): boolean {
  const head = b.subarray(0, Math.min(b.length, 64))
  for (let i = 0; i + 6 < head.length; i++) if (head[i] === 0x42 && head[i + 1] === 0x82) return ascii(head, i + 3, 'webm') || ascii(head, i + 2, 'webm')
  return false
}

/**
 * SVG is text: after an optional BOM, whitespace, XML declaration, comments and doctype,
 * the first element must be `<svg`. The bytes must be UTF-8.
 */
function isSvg(b: Uint8Array): boolean {
  const text = decodeUtf8Prefix(b.subarray(0, Math.min(b.length, SNIFF_BYTES)))
  if (text === null) return false
  let s = text.replace(/^\uFEFF/, '')
  for (;;) {
    s = s.trimStart()
    if (s.startsWith('<?xml')) {
      const end = s.indexOf('?>')
      if (end < 0) return false
      s = s.slice(end + 2)
    } else if (s.startsWith('<!--')) {
      const end = s.indexOf('-->')
      if (end < 0) return false
      s = s.slice(end + 3)
    } else if (/^<!DOCTYPE\s+svg/i.test(s)) {
      const end = s.indexOf('>')
      if (end < 0) return false
      // An internal subset `[...]` may contain '>'.
      const bracket = s.indexOf('[')
      const close = bracket >= 0 && bracket < end ? s.indexOf(']>', bracket) : end - 1
      if (close < 0) return false
      s = s.slice(bracket >= 0 && bracket < end ? close + 2 : end + 1)
    } else break
  }
  return /^<svg[\s>/]/.test(s) || /^<[A-Za-z_][\w.-]*:svg[\s>/]/.test(s)
}

/** UTF-8 text of a prefix, allowing a character cut at its end; null when not UTF-8. */
function decodeUtf8Prefix(b: Uint8Array): string | null {
  for (let cut = 0; cut <= 3 && cut < b.length; cut++) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(b.subarray(0, b.length - cut))
    } catch {}
  }
  return null
}
