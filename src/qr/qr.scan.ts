/** POST /qr/scan: fetch an image under the safety limits and decode the QR code in it. */
import { AppError, parameterError } from '../shared'
import { fetchImage } from './qr.fetch'
import { checkPixelBudget } from './qr.image-size'
import { createScanWorker } from './qr.scan-worker'

export const SCAN_LIMITS = { maxBytes: 2 * 1024 * 1024, timeoutMs: 5000, maxRedirects: 3 } as const

export function createScanService(opts: { allowPrivateNetworks: boolean }) {
  // Decoding runs on a worker thread so redirects keep answering during a burst of scans.
  const decoder = createScanWorker()
  return {
    async scan(url: string): Promise<{ data: string; message: string }> {
      const image = await fetchImage(url, { ...SCAN_LIMITS, allowPrivateNetworks: opts.allowPrivateNetworks, kinds: ['png', 'jpeg'], field: 'url' })
      // Before any decoder sees it: a tiny file may declare a canvas of gigabytes.
      checkPixelBudget(image.bytes, image.kind as 'png' | 'jpeg', 'url')
      let data: string | null
      try {
        data = await decoder.decode(image.bytes)
      } catch (e) {
        if (e instanceof AppError) throw e
        throw parameterError(`'url' the ${image.kind.toUpperCase()} image could not be decoded: ${(e as Error).message}`)
      }
      return data === null ? { data: '', message: `no QR code found in the ${image.kind.toUpperCase()} image` } : { data, message: 'QR code decoded' }
    },
  }
}
export type ScanService = ReturnType<typeof createScanService>
