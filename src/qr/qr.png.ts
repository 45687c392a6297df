/**
 * Pixel work resvg does not do for us: compositing a layer over a cached frame, and a
 * minimal PNG encoder (8-bit RGBA, filter "Sub" on every row, the runtime's zlib),
 * which is also faster than resvg's own at 1000 px. resvg's pixels are premultiplied.
 */
import { deflateSync } from 'node:zlib'

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)

type Bytes = Uint8Array | Uint8ClampedArray

/** `top` over `bottom`, both premultiplied RGBA of the same size (a new array). */
export function compositeOver(top: Bytes, bottom: Bytes): Uint8Array {
  const out = new Uint8Array(top.length)
  for (let i = 0; i < top.length; i += 4) {
    const ta = top[i + 3]!
    if (ta === 255) {
      out[i] = top[i]!
      out[i + 1] = top[i + 1]!
      out[i + 2] = top[i + 2]!
      out[i + 3] = 255
      continue
    }
    const k = (255 - ta) / 255
    out[i] = top[i]! + bottom[i]! * k
    out[i + 1] = top[i + 1]! + bottom[i + 1]! * k
    out[i + 2] = top[i + 2]! + bottom[i + 2]! * k
    out[i + 3] = ta + bottom[i + 3]! * k
  }
  return out
}

/** Premultiplied → straight alpha, as PNG stores it (in place when opaque pixels dominate, a copy otherwise). */
function demultiply(px: Bytes): Bytes {
  let out: Uint8Array | null = null
  for (let i = 3; i < px.length; i += 4) {
    const a = px[i]!
    if (a === 255 || a === 0) continue
    out ??= new Uint8Array(px)
    const k = 255 / a
    out[i - 3] = Math.min(255, Math.round(px[i - 3]! * k))
    out[i - 2] = Math.min(255, Math.round(px[i - 2]! * k))
    out[i - 1] = Math.min(255, Math.round(px[i - 1]! * k))
  }
  return out ?? px
}

/** PNG bytes from premultiplied RGBA. */
export function encodePng(premultiplied: Bytes, width: number, height: number): Uint8Array {
  const rgba = demultiply(premultiplied)
  const stride = width * 4
  const raw = new Uint8Array((stride + 1) * height)
  for (let y = 0; y < height; y++) {
    const src = y * stride
    const dst = y * (stride + 1)
    raw[dst] = 1 // Sub: each byte minus the byte of the pixel to its left; flat colours become zeros.
    for (let i = 0; i < 4; i++) raw[dst + 1 + i] = rgba[src + i]!
    for (let i = 4; i < stride; i++) raw[dst + 1 + i] = (rgba[src + i]! - rgba[src + i - 4]!) & 255
  }
  const ihdr = new Uint8Array(13)
  const v = new DataView(ihdr.buffer)
  v.setUint32(0, width)
  v.setUint32(4, height)
  ihdr.set([8, 6, 0, 0, 0], 8)
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 4 })), chunk('IEND', new Uint8Array())])
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const v = new DataView(out.buffer)
  v.setUint32(0, data.length)
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i)
  out.set(data, 8)
  v.setUint32(8 + data.length, Bun.hash.crc32(out.subarray(4, 8 + data.length)))
  return out
}
