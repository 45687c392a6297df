/** Logos and frames given as uploaded file ids (`fil_…`). */
import type { FileService } from '../files/files.service'
import { sniffImage, type FetchedImage } from './qr.fetch'

export async function readUploadedImage(files: FileService, id: string): Promise<FetchedImage | null> {
  const f = files.open(id)
  if (!f) return null
  const bytes = new Uint8Array(await Bun.file(f.path).arrayBuffer())
  const kind = sniffImage(bytes)
  return kind ? { bytes, kind } : null
}
