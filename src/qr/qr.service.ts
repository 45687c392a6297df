/**
 * The QR module's face to the rest of the service: rendering for links and templates,
 * the design checks links and templates call, and scanning.
 */
import type { Caller } from '../auth/auth.service'
import { createQrRenderer, type QrRendererOptions, type RenderedQr } from './qr.render'
import { createScanService } from './qr.scan'

/** The one thing the QR module needs from links (the links module implements it). */
export interface LinkLookup {
  get(caller: Caller, id: string): { id: string; shortLink: string; qrOptions: unknown | null }
}

/** The QR content of a short link: `?qr=1` marks the visit as a scan. */
export function qrTextFor(shortLink: string): string {
  const url = new URL(shortLink)
  url.searchParams.set('qr', '1')
  return url.toString()
}

export function createQrService(opts: QrRendererOptions) {
  const renderer = createQrRenderer(opts)
  const scanner = createScanService(opts)
  return {
    renderQr: renderer.renderQr,
    validateQrOptions: renderer.validateQrOptions,
    assertScannable: renderer.assertScannable,
    scan: scanner.scan,
    /** Brings the in-process decoders up to speed (see warmUpChecks): call once when the server starts. */
    warmUp: renderer.warmUp,
  }
}
export type QrService = ReturnType<typeof createQrService>
export type { RenderedQr }
