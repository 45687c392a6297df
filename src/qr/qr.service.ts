/**
 * The QR module's face to the rest of the service: rendering for links and templates,
 * the design checks links and templates call, and scanning. Designs draw uploaded files
 * only when their owner may (see qr.files): every call names the design's owner.
 */
import type { Caller } from '../auth'
import { parameterError } from '../shared'
import { designOf, fileIdsOf } from './qr.design'
import { type DesignFiles, fileNotFoundMessage } from './qr.files'
import { createQrRenderer, type RenderedQr, type RenderInput } from './qr.render'
import { createScanService } from './qr.scan'

/** The one thing the QR module needs from links (the links module implements it). */
export interface LinkLookup {
  get(caller: Caller, id: string): { id: string; shortLink: string; qrOptions: unknown | null; userId: string }
}

/** A stored design and the user it belongs to (whose files it may draw). */
export interface OwnedDesign {
  qrOptions: unknown
  ownerId: string
}

/** The QR content of a short link: `?qr=1` marks the visit as a scan. */
export function qrTextFor(shortLink: string): string {
  const url = new URL(shortLink)
  url.searchParams.set('qr', '1')
  return url.toString()
}

export interface QrServiceOptions {
  allowPrivateNetworks: boolean
  /** Uploaded files as logos and frames; without it, designs take URLs only. */
  files?: DesignFiles
}

export function createQrService(opts: QrServiceOptions) {
  const { files } = opts
  const renderer = createQrRenderer({ allowPrivateNetworks: opts.allowPrivateNetworks, readFile: files?.read })
  const scanner = createScanService(opts)
  const allowFileIds = !!files

  /** The files the design names that its owner may draw. Designs that break the rules draw nothing here; rendering reports why. */
  function usableFiles(qrOptions: unknown, ownerId: string): string[] {
    if (!files) return []
    let ids: { id: string }[]
    try {
      ids = fileIdsOf(designOf(qrOptions, { allowFileIds }))
    } catch {
      return []
    }
    return ids.filter(({ id }) => files.usable(id, ownerId)).map(({ id }) => id)
  }

  return {
    /** Renders a design for its owner: files the owner may not draw are left out (reported as repairs). */
    renderQr: (input: RenderInput & { ownerId: string }): Promise<RenderedQr> => {
      const { ownerId, ...rest } = input
      return renderer.renderQr({ ...rest, usableFiles: usableFiles(input.qrOptions, ownerId) })
    },
    /** Cheap rules (schema, colours, contrast) and, given the owner, that each named file is one the owner may use, within the byte and pixel limits. Throws parameter_error. */
    validateQrOptions(qrOptions: unknown, ownerId?: string): void {
      const design = designOf(qrOptions, { allowFileIds })
      if (ownerId === undefined) return
      for (const { field, id } of fileIdsOf(design)) {
        if (!files?.usable(id, ownerId)) throw parameterError(fileNotFoundMessage(field, id))
        // Header checks only (no decode): a 600-byte file may declare 30000×30000 px.
        files.checkImage(id, field)
      }
    },
    /** The full check for a design saved by/for `ownerId`: rendered and decoded; any repair needed (a file it may not use included) → 422. */
    assertScannable: (qrOptions: unknown, ownerId: string): Promise<void> => renderer.assertScannable(qrOptions, usableFiles(qrOptions, ownerId)),
    scan: scanner.scan,
    /** Brings the in-process decoders up to speed (see warmUpChecks): call once when the server starts. */
    warmUp: renderer.warmUp,
  }
}
export type QrService = ReturnType<typeof createQrService>
export type { RenderedQr }
