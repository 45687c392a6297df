import { customAlphabet } from 'nanoid'

/** URL-safe, unambiguous alphabet; 16 chars ≈ 95 bits, so collisions are not a concern. */
const randomId = customAlphabet('0123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ', 16)

export type IdPrefix = 'lnk' | 'tag' | 'fil' | 'tpl' | 'usr' | 'key' | 'req' | 'imp' | 'upl' | 'bat' | 'evt' | 'whk' | 'led' | 'sal' | 'cus'

/** An uploaded file's id as requests may name it (`newId('fil')` makes a subset of these). */
export const FILE_ID_PATTERN = '^fil_[A-Za-z0-9_-]+$'

/** Opaque identifiers with a type prefix, e.g. `lnk_3fQk9…`. Never reused. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomId()}`
}
