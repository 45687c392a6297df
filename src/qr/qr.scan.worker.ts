/**
 * Decodes uploaded QR images on their own thread: a 3000 px photo is ~120 ms of
 * synchronous wasm that would otherwise stall every redirect. `onmessage` is
 * registered before anything else (a compiled binary needs that of a worker).
 */
import { decodeImageFile } from './qr.decode'

declare const self: Worker

self.onmessage = async (ev: MessageEvent<{ id: number; bytes: Uint8Array }>) => {
  const { id, bytes } = ev.data
  try {
    postMessage({ id, text: await decodeImageFile(bytes) })
  } catch (e) {
    postMessage({ id, error: String(e) })
  }
}
