/** Configuration: the TOML/env schema with defaults, loading and validation, and the settings derived from it (public origin, API prefix). Other modules import this file only. */
export { ConfigError, loadConfig, parseDuration } from './config.load'
export type { Config } from './config.schema'
export { deriveSettings, type Settings } from './settings'
