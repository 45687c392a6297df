/**
 * Preloaded by every `bun test` in this repository (bunfig.toml [test] preload): the default
 * timeout of tests and hooks. Bun does not read `[test] timeout` from bunfig.toml, and its own
 * default (5 s) kills an end-to-end test's server on a loaded 2-core machine. scripts/test.sh
 * also passes --timeout, so the command line alone shows it.
 */
import { setDefaultTimeout } from 'bun:test'

export const TEST_TIMEOUT_MS = 90_000
setDefaultTimeout(TEST_TIMEOUT_MS)
