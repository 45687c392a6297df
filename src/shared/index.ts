/** Small utilities every module may use: errors, ids, validation, paging, LRU, streams, URLs, image sizes. Imports no module. Other modules import this file only. */
export { type AddressRules, checkedAddress, isPrivateAddress, pinnedRequest } from './address'
export type { Awaitable } from './awaitable'
export { createClientIpResolver } from './client-ip'
export { createDiskFullLog, DISK_FULL_LOG_MS, type DiskFullLog, diskFullLogOf } from './disk-full'
export {
  AppError,
  badRequest,
  DISK_FULL_RETRY_AFTER_S,
  diskFull,
  type ErrorCode,
  errorResponse,
  forbidden,
  isDiskFull,
  isStoreUnreachable,
  notFound,
  orStoreUnavailable,
  parameterError,
  STATUS_BY_CODE,
  STORE_RETRY_AFTER_S,
  storeUnavailable,
} from './errors'
export { isDateTime } from './formats'
export { createGcPacer, type GcPacer } from './gc-pacer'
export { HSTS, withHsts } from './hsts'
export { FILE_ID_PATTERN, newId } from './ids'
export { type ImageSize, imageSize, type SizedKind, svgSize } from './image-size'
export { ipBucket } from './ip-bucket'
export { type Condition, condition, idIn, type ListPage, listRows, matches } from './list-query'
export { listRowsPg } from './list-query.pg'
export { createLogger, type Logger } from './log'
export { LruCache } from './lru'
export { pageWindow, pagingQuery, sortOrderQuery } from './paging'
export { isValidHostHeader, withApiHeaders, withPageHeaders } from './security-headers'
export { escapeLike } from './sql'
export { readCapped } from './streams'
export { toIso } from './time'
export { decodePathSegment, normaliseUrl } from './urls'
export { type AnySchema, assertValid, describeRule, PlainText, parseQuery, queryParameters } from './validate'
export { workerSpec } from './worker-spec'
