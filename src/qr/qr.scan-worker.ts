/** The scan decoder's worker: one decode at a time, recycled once zxing's wasm memory has grown. */
import { createJobWorker } from './qr.job-worker'

/** A 16 MP photo takes about 1 s with every retry; ten times that is a stuck decoder. */
const SCAN_TIMEOUT_MS = 10_000
/** zxing's wasm memory after a 12-16 MP photo; a plain 1000 px scan stays near 40 MB. */
const RECYCLE_AT_BYTES = 256 * 1024 * 1024

export function createScanWorker() {
  const worker = createJobWorker<Uint8Array, string | null>({
    entry: 'qr/qr.scan.worker.ts',
    doing: 'decoding the image',
    timeoutMs: SCAN_TIMEOUT_MS,
    recycleAtBytes: RECYCLE_AT_BYTES,
  })
  return { decode: (bytes: Uint8Array) => worker.run(bytes), stop: worker.stop }
}
