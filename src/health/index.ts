/** Health: liveness and readiness (GET {baseUrl}/healthz and /readyz) from a list of named checks. Other modules import this file only. */
export { HEALTH_PATHS, healthRoutes } from './health.routes'
export { CHECK_TIMEOUT_MS, type Check, createReadiness, type Readiness, type ReadinessReport, storeCheck } from './readiness'
