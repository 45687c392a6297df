/**
 * Small real files of every allowed type, made in code, for tests (never imported by
 * the server). Images and the PDF and WAV decode in a browser; the mp3/ogg/m4a/mp4/webm
 * samples are valid headers, enough for type detection (the browser tests record a
 * playable WebM in Chromium itself).
 */

import jpeg from 'jpeg-js'
import { PNG } from 'pngjs'

const enc = new TextEncoder()
const concat = (...parts: (Uint8Array | number[] | string)[]) => {
  const arrays = parts.map((p) => (typeof p === 'string' ? enc.encode(p) : p instanceof Uint8Array ? p : Uint8Array.from(p)))
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.length, 0))
  let at = 0
  for (const a of arrays) {
    out.set(a, at)
    at += a.length
  }
  return out
}
const u32be = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
const u32le = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255]
const u16le = (n: number) => [n & 255, (n >>> 8) & 255]

/** A width×height gradient PNG. */
export function samplePng(width = 64, height = 48): Uint8Array {
  const png = new PNG({ width, height })
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4
      png.data[i] = Math.round((x / width) * 255)
      png.data[i + 1] = Math.round((y / height) * 255)
      png.data[i + 2] = 160
      png.data[i + 3] = 255
    }
  return new Uint8Array(PNG.sync.write(png))
}

export function sampleJpeg(width = 32, height = 32): Uint8Array {
  const data = Buffer.alloc(width * height * 4, 200)
  return new Uint8Array(jpeg.encode({ data, width, height }, 80).data)
}

export const sampleGif = () =>
  Uint8Array.from([
    0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b,
  ])

/** A 1×1 lossless WebP. */
export const sampleWebp = () =>
  concat('RIFF', u32le(26), 'WEBPVP8L', u32le(13), [0x2f, 0x00, 0x00, 0x00, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07, 0x00])

export const sampleSvg = (label = 'SVG sample') =>
  enc.encode(
    `<?xml version="1.0" encoding="UTF-8"?>\n<!-- a comment -->\n<svg xmlns="http://www.w3.org/2000/svg" width="200" height="120" viewBox="0 0 200 120">` +
      `<rect width="200" height="120" fill="#1d4ed8"/><text x="100" y="68" font-size="20" text-anchor="middle" fill="#fff">${label}</text></svg>\n`,
  )

/** A one-page PDF showing `text`, with a correct cross-reference table. */
export function samplePdf(text = 'Sample PDF'): Uint8Array {
  const stream = `BT /F1 24 Tf 72 720 Td (${text.replace(/[()\\]/g, '\\$&')}) Tj ET`
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]
  let out = '%PDF-1.4\n'
  const offsets: number[] = []
  objects.forEach((body, i) => {
    offsets.push(out.length)
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return enc.encode(out)
}

/** `seconds` of a 440 Hz tone, 8 kHz mono 16-bit PCM. */
export function sampleWav(seconds = 1): Uint8Array {
  const rate = 8000
  const n = Math.round(rate * seconds)
  const pcm = new Uint8Array(n * 2)
  const view = new DataView(pcm.buffer)
  for (let i = 0; i < n; i++) view.setInt16(i * 2, Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 8000), true)
  return concat(
    'RIFF',
    u32le(36 + pcm.length),
    'WAVE',
    'fmt ',
    u32le(16),
    u16le(1),
    u16le(1),
    u32le(rate),
    u32le(rate * 2),
    u16le(2),
    u16le(16),
    'data',
    u32le(pcm.length),
    pcm,
  )
}

/** MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz) after an ID3v2 tag, or bare frames. */
export function sampleMp3(withId3 = true): Uint8Array {
  const frame = concat([0xff, 0xfb, 0x90, 0x64], new Uint8Array(413))
  const id3 = concat('ID3', [4, 0, 0, 0, 0, 0, 0])
  return withId3 ? concat(id3, frame, frame) : concat(frame, frame)
}

export const sampleOgg = () => concat('OggS', [0, 2], new Uint8Array(20), [1, 0x1e], '\x01vorbis', new Uint8Array(40))
export const sampleOggTheora = () => concat('OggS', [0, 2], new Uint8Array(20), [1, 0x2a], '\x80theora', new Uint8Array(40))
export const sampleM4a = () => concat(u32be(24), 'ftypM4A ', u32be(0), 'M4A isom', u32be(8), 'free')
export const sampleMp4 = () => concat(u32be(24), 'ftypisom', u32be(512), 'isomavc1', u32be(8), 'free')
export const sampleWebmHeader = () =>
  concat(
    [0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0xf7, 0x81, 0x01, 0x42, 0xf2, 0x81, 0x04, 0x42, 0xf3, 0x81, 0x08, 0x42, 0x82, 0x84],
    'webm',
    [0x42, 0x87, 0x81, 0x02, 0x42, 0x85, 0x81, 0x02],
  )
export const sampleMkvHeader = () =>
  concat(
    [0x1a, 0x45, 0xdf, 0xa3, 0xa3, 0x42, 0x86, 0x81, 0x01, 0x42, 0xf7, 0x81, 0x01, 0x42, 0xf2, 0x81, 0x04, 0x42, 0xf3, 0x81, 0x08, 0x42, 0x82, 0x88],
    'matroska',
    [0x42, 0x87, 0x81, 0x04, 0x42, 0x85, 0x81, 0x02],
  )
