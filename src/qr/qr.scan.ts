/** POST /qr/scan: fetch an image under the safety limits and decode the QR code in it. */
import { decodeImageFile } from './qr.decode'
import { fetchImage } from './qr.fetch'

export const SCAN_LIMITS = { maxBytes: 2 * 1024 * 1024, timeoutMs: 5000, maxRedirects: 3 } as const

export function createScanService(opts: { allowPrivateNetworks: boolean }) {
  return {
    async scan(url: string): Promise<{ data: string; message: string }> {
      const image = await fetchImage(url, { ...SCAN_LIMITS, allowPrivateNetworks: opts.allowPrivateNetworks, kinds: ['png', 'jpeg'], field: 'url' })
      const data = await decodeImageFile(image.bytes)
      return data === null
        ? { data: '', message: `no QR code found in the ${image.kind.toUpperCase()} image` }
        : { data, message: 'QR code decoded' }
    },
  }
}
export type ScanService = ReturnType<typeof createScanService>
