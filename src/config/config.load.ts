/**
 * Loads the TOML file, applies `SHORTLINK_<SECTION>_<KEY>` environment overrides,
 * fills defaults and validates everything at once, so an operator sees every bad key.
 */

import { existsSync, readFileSync } from 'node:fs'
import type { TObject, TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { type AnySchema, describeRule } from '../shared'
import { Config } from './config.schema'

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

export interface LoadedConfig {
  config: Config
  /** The file read, or null when running on the embedded default. */
  file: string | null
}

export function configPath(explicit: string | undefined, env: Record<string, string | undefined>): { path: string; explicit: boolean } {
  if (explicit) return { path: explicit, explicit: true }
  if (env.SHORTLINK_CONFIG) return { path: env.SHORTLINK_CONFIG, explicit: true }
  return { path: './shortlink.toml', explicit: false }
}

export function loadConfig(explicitPath: string | undefined, env: Record<string, string | undefined> = process.env): LoadedConfig {
  const { path, explicit } = configPath(explicitPath, env)
  let raw: Record<string, unknown> = {}
  let file: string | null = null
  if (existsSync(path)) {
    try {
      raw = Bun.TOML.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
    } catch (e) {
      throw new ConfigError([`${path}: not valid TOML: ${(e as Error).message}`])
    }
    file = path
  } else if (explicit) {
    throw new ConfigError([`${path}: no such file`])
  }
  return { config: buildConfig(raw, env), file }
}

/** Pure: raw TOML object + environment → validated config with defaults. */
export function buildConfig(raw: Record<string, unknown>, env: Record<string, string | undefined>): Config {
  const problems: string[] = []
  const merged: Record<string, Record<string, unknown>> = {}
  for (const [section, value] of Object.entries(raw)) {
    if (!(section in Config.properties)) {
      problems.push(`[${section}]: unknown section (known: ${Object.keys(Config.properties).join(', ')})`)
      continue
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`[${section}]: must be a table`)
      continue
    }
    merged[section] = { ...(value as Record<string, unknown>) }
  }
  applyEnv(merged, env, problems)
  if (env.SHORTLINK_ADMIN_KEY && !env.SHORTLINK_AUTH_ADMINKEY) {
    merged.auth = { ...(merged.auth ?? {}), adminKey: env.SHORTLINK_ADMIN_KEY }
  }

  const withDefaults: Record<string, unknown> = {}
  for (const [section, schema] of Object.entries(Config.properties) as [string, TObject][]) {
    const given = merged[section] ?? {}
    for (const [key, value] of Object.entries(given)) {
      const keySchema = schema.properties[key] as TSchema | undefined
      if (!keySchema) {
        problems.push(`${section}.${key}: unknown key (known: ${Object.keys(schema.properties).join(', ')})`)
        continue
      }
      if (!Value.Check(keySchema, value)) {
        const err = Value.Errors(keySchema, value).First()
        const rule = err ? describeRule(err.schema as AnySchema, err.message) : 'invalid'
        const got = (keySchema as { 'x-secret'?: boolean })['x-secret']
          ? `a secret value of ${String(value).length} characters, not shown`
          : JSON.stringify(value)
        problems.push(`${section}.${key}: ${rule} (got ${got}; expected ${typeName(keySchema)})`)
      }
    }
    const known = Object.fromEntries(Object.entries(given).filter(([k]) => k in schema.properties))
    withDefaults[section] = Value.Default(schema, known)
  }
  if (problems.length === 0) problems.push(...crossChecks(withDefaults as Config))
  if (problems.length) throw new ConfigError(problems)
  return withDefaults as Config
}

function typeName(schema: AnySchema): string {
  if (schema.anyOf) return schema.anyOf.map((s: AnySchema) => JSON.stringify(s.const)).join(' | ')
  if (schema.type === 'array') return `list of ${schema.items.type}`
  return schema.type
}

/** Env values are strings: coerce them by the key's schema type. */
function applyEnv(merged: Record<string, Record<string, unknown>>, env: Record<string, string | undefined>, problems: string[]) {
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('SHORTLINK_') || value === undefined) continue
    const rest = name.slice('SHORTLINK_'.length)
    const sep = rest.indexOf('_')
    if (sep < 0) continue
    const sectionName = Object.keys(Config.properties).find((s) => s.toUpperCase() === rest.slice(0, sep))
    if (!sectionName) continue
    const schema = Config.properties[sectionName as keyof typeof Config.properties] as TObject
    const keyName = Object.keys(schema.properties).find((k) => k.toUpperCase() === rest.slice(sep + 1))
    if (!keyName) {
      problems.push(`${name}: unknown key ${sectionName}.${rest.slice(sep + 1).toLowerCase()}`)
      continue
    }
    const keySchema = schema.properties[keyName] as AnySchema
    merged[sectionName] = { ...(merged[sectionName] ?? {}), [keyName]: coerceEnv(keySchema, value) }
  }
}

function coerceEnv(schema: AnySchema, value: string): unknown {
  if (schema.type === 'integer' || schema.type === 'number') return value.trim() === '' ? value : Number.isFinite(Number(value)) ? Number(value) : value
  if (schema.type === 'boolean') return value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value
  if (schema.type === 'array') {
    const trimmed = value.trim()
    if (trimmed.startsWith('[')) {
      try {
        return JSON.parse(trimmed)
      } catch {
        return value
      }
    }
    return trimmed === '' ? [] : trimmed.split(',').map((s) => s.trim())
  }
  return value
}

function crossChecks(c: Config): string[] {
  const problems: string[] = []
  if (c.server.httpPort === c.server.httpsPort) problems.push('server.httpPort: must differ from server.httpsPort')
  if (c.tls.mode === 'files' && (!c.tls.certFile || !c.tls.keyFile)) problems.push('tls.certFile / tls.keyFile: required when tls.mode = "files"')
  if (c.tls.mode === 'files') {
    for (const key of ['certFile', 'keyFile'] as const) if (c.tls[key] && !existsSync(c.tls[key])) problems.push(`tls.${key}: no such file ${c.tls[key]}`)
  }
  if (c.store.url) {
    let host = ''
    try {
      host = new URL(c.store.url).hostname
    } catch {}
    if (!host) problems.push('store.url: expected postgres://user:password@host:port/database (a host is required)')
  }
  problems.push(...healthChecks(c))
  if (c.domains.defaults.length === 0) problems.push('domains.defaults: at least one default short domain is required')
  try {
    new URL(c.server.baseUrl)
  } catch {
    problems.push(`server.baseUrl: not a URL`)
  }
  return problems
}

function healthChecks(c: Config): string[] {
  const problems: string[] = []
  const every = c.health.every === '0' ? 0 : parseDuration(c.health.every)
  if (every !== 0 && !(every >= 1000)) problems.push(`health.every: at least 1s, or "0" for off (got ${JSON.stringify(c.health.every)})`)
  const timeout = parseDuration(c.health.timeout)
  if (!(timeout >= 100 && timeout <= 60_000)) problems.push(`health.timeout: 100ms to 60s (got ${JSON.stringify(c.health.timeout)})`)
  return problems
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** "6h", "30s", "1h30m" → milliseconds (the schema's pattern has checked the form); NaN when malformed. */
export function parseDuration(text: string): number {
  if (!/^([0-9]+(ms|s|m|h|d))+$/.test(text)) return Number.NaN
  let ms = 0
  for (const m of text.matchAll(/([0-9]+)(ms|s|m|h|d)/g)) ms += Number(m[1]) * UNIT_MS[m[2]!]!
  return ms
}
