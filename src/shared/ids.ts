import { customAlphabet } from 'nanoid'

/** URL-safe, unambiguous alphabet; 16 chars ≈ 95 bits, so collisions are not a concern. */
const randomId = customAlphabet('0123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ', 16)

export type IdPrefix = 'lnk' | 'tag' | 'fil' | 'tpl' | 'usr' | 'key' | 'req'

/** Opaque identifiers with a type prefix, e.g. `lnk_3fQk9…`. Never reused. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomId()}`
}
