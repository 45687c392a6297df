/** The QR caches use the shared bounded LRU. */
export { LruCache } from '../shared'
