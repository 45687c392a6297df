/** The redirect server: resolving a short link for a visitor (targeting, expiry, password gate, bots), hosted pages, counting visits. Other modules import this file only. */
export { CLICK_ID_PARAM } from './click-id'
export { renderHostedPage } from './hosted'
export { createClusterPasswordLimits, createPasswordGate, loadOrCreateSecret, loadOrCreateSecretPg, type PasswordGate } from './password-gate'
export { createRedirectHandler } from './redirect.handler'
export { type VisitCounterPort, visitOrdinalFrom } from './visit-ordinal'
