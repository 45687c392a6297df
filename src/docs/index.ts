/** The OpenAPI document and Swagger UI, and the error responses every route documents. Other modules import this file only. */
export { type AnyElysia, docsRoutes, PUBLIC_DOC_PATHS } from './docs.routes'
export { errorResponses } from './docs.schema'
