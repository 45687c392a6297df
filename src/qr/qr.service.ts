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

type LinkSeen = { id: string; shortLink: string; qrOptions: unknown | null; userId: string }

/** The one thing the QR module needs from links (the links module implements it). */
export interface LinkLookup {
  get(caller: Caller, id: string): LinkSeen | Promise<LinkSeen>
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
  function usableFiles(qrOptions: unknown, ownerId: string): string[] | Promise<string[]> {
    if (!files) return []
    let ids: { id: string }[]
    try {
      ids = fileIdsOf(designOf(qrOptions, { allowFileIds }))
    } catch {
      return []
    }
    // At once over the SQLite store; over PostgreSQL each answer is a promise.
    const usable = ids.map(({ id }) => files.usable(id, ownerId))
    const pick = (ok: boolean[]) => ids.filter((_, i) => ok[i]).map(({ id }) => id)
    return usable.some((u) => u instanceof Promise) ? Promise.all(usable).then(pick) : pick(usable as boolean[])
  }
  const withUsable = <R>(qrOptions: unknown, ownerId: string, f: (usable: string[]) => Promise<R>): Promise<R> => {
    const usable = usableFiles(qrOptions, ownerId)
    return usable instanceof Promise ? usable.then(f) : f(usable)
  }

  return {
    /** Renders a design for its owner: files the owner may not draw are left out (reported as repairs). */
    renderQr: (input: RenderInput & { ownerId: string }): Promise<RenderedQr> => {
      const { ownerId, ...rest } = input
      return withUsable(input.qrOptions, ownerId, (usableFiles) => renderer.renderQr({ ...rest, usableFiles }))
    },
    /** Cheap rules (schema, colours, contrast) and, given the owner, that each named file is one the owner may use, within the byte and pixel limits. Throws parameter_error. */
    validateQrOptions(qrOptions: unknown, ownerId?: string): void | Promise<void> {
      const design = designOf(qrOptions, { allowFileIds })
      if (ownerId === undefined) return
      // One file after the other, at once over the SQLite store (a promise over PostgreSQL).
      const check = (named: { field: string; id: string }[], i: number): void | Promise<void> => {
        const next = named[i]
        if (!next) return
        const { field, id } = next
        const usable = files ? files.usable(id, ownerId) : false
        const afterUsable = (ok: boolean): void | Promise<void> => {
          if (!ok || !files) throw parameterError(fileNotFoundMessage(field, id))
          // Header checks only (no decode): a 600-byte file may declare 30000×30000 px.
          const checked = files.checkImage(id, field)
          return checked instanceof Promise ? checked.then(() => check(named, i + 1)) : check(named, i + 1)
        }
        return usable instanceof Promise ? usable.then(afterUsable) : afterUsable(usable)
      }
      return check(fileIdsOf(design), 0)
    },
    /** The full check for a design saved by/for `ownerId`: rendered and decoded; any repair needed (a file it may not use included) → 422. */
    assertScannable: (qrOptions: unknown, ownerId: string): Promise<void> =>
      withUsable(qrOptions, ownerId, (usable) => renderer.assertScannable(qrOptions, usable)),
    scan: scanner.scan,
    /** Brings the in-process decoders up to speed (see warmUpChecks): call once when the server starts. */
    warmUp: renderer.warmUp,
  }
}
export type QrService = ReturnType<typeof createQrService>
export type { RenderedQr }
