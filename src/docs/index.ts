/** The OpenAPI document and Swagger UI, and the error responses every route documents. Other modules import this file only. */
export { PUBLIC_DOC_PATHS, docsRoutes } from './docs.routes'
export { errorResponses } from './docs.schema'
