/**
 * The pixel budget of user images in QR designs and scans: every logo, frame and scan
 * input passes `checkPixelBudget` (sizes read from headers, src/shared/image-size.ts) first.
 */
import { type ImageSize, imageSize, parameterError, type SizedKind } from '../shared'

export { type ImageSize, imageSize, type SizedKind, svgSize } from '../shared'

/**
 * Most pixels a user image may declare: 4096×4096 (16.8 MP). Phone photos (12 MP
 * 4032×3024, 16 MP 4608×3456) fit, so scans of camera pictures still work; logos and frames
 * are drawn at most 1000 px wide, so larger ones add nothing. Decoding one at the limit
 * costs a decoder about 64 MB of RGBA (a 16 MP scan grows the scan worker by ~500 MB with
 * zxing's retries, given back when the worker is recycled).
 */
export const MAX_IMAGE_PIXELS = 4096 * 4096

/** The declared size when it is within MAX_IMAGE_PIXELS; else (or unreadable) parameter_error naming `field`. */
export function checkPixelBudget(bytes: Uint8Array, kind: SizedKind, field: string): ImageSize {
  const size = imageSize(bytes, kind)
  if (!size || size.width < 1 || size.height < 1) throw parameterError(`'${field}' the ${kind.toUpperCase()} image's size could not be read from its header`)
  if (size.width * size.height > MAX_IMAGE_PIXELS)
    throw parameterError(`'${field}' the image declares ${size.width}×${size.height} px; at most ${MAX_IMAGE_PIXELS} pixels (e.g. 4096×4096) are accepted`)
  return size
}
