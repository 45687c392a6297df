/** POST /qr/scan: fetch an image under the safety limits and decode the QR code in it. */
import { createScanWorker } from './qr.scan-pool'
import { fetchImage } from './qr.fetch'

export const SCAN_LIMITS = { maxBytes: 2 * 1024 * 1024, timeoutMs: 5000, maxRedirects: 3 } as const

export function createScanService(opts: { allowPrivateNetworks: boolean }) {
  // Decoding runs on a worker thread so redirects keep answering during a burst of scans.
  const decoder = createScanWorker()
  return {
    async scan(url: string): Promise<{ data: string; message: string }> {
      const image = await fetchImage(url, { ...SCAN_LIMITS, allowPrivateNetworks: opts.allowPrivateNetworks, kinds: ['png', 'jpeg'], field: 'url' })
      const data = await decoder.decode(image.bytes)
      return data === null
        ? { data: '', message: `no QR code found in the ${image.kind.toUpperCase()} image` }
        : { data, message: 'QR code decoded' }
    },
  }
}
export type ScanService = ReturnType<typeof createScanService>
