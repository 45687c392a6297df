/**
 * Loads the TOML file, applies `SHORTLINK_<SECTION>_<KEY>` environment overrides,
 * fills defaults and validates everything at once, so an operator sees every bad key.
 */

import { existsSync, readFileSync } from 'node:fs'
import { isAbsolute, relative, resolve } from 'node:path'
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
      // A table inside a section ([backup.s3]): each of its keys is checked on its own, so a secret is never echoed.
      if (isTable(keySchema)) {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) problems.push(`[${section}.${key}]: must be a table`)
        else
          for (const [sub, subValue] of Object.entries(value)) {
            const subSchema = keySchema.properties[sub] as TSchema | undefined
            if (!subSchema) problems.push(`${section}.${key}.${sub}: unknown key (known: ${Object.keys(keySchema.properties).join(', ')})`)
            else checkValue(`${section}.${key}.${sub}`, subSchema, subValue, problems)
          }
        continue
      }
      checkValue(`${section}.${key}`, keySchema, value, problems)
    }
    const known = Object.fromEntries(Object.entries(given).filter(([k]) => k in schema.properties))
    withDefaults[section] = Value.Default(schema, known)
  }
  if (problems.length === 0) problems.push(...crossChecks(withDefaults as Config))
  if (problems.length) throw new ConfigError(problems)
  return withDefaults as Config
}

const isTable = (schema: TSchema): schema is TObject => (schema as AnySchema).type === 'object' && !!(schema as AnySchema).properties

function checkValue(path: string, schema: TSchema, value: unknown, problems: string[]) {
  if (Value.Check(schema, value)) return
  const err = Value.Errors(schema, value).First()
  const rule = err ? describeRule(err.schema as AnySchema, err.message) : 'invalid'
  const got = (schema as { 'x-secret'?: boolean })['x-secret'] ? `a secret value of ${String(value).length} characters, not shown` : JSON.stringify(value)
  problems.push(`${path}: ${rule} (got ${got}; expected ${typeName(schema)})`)
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
    // A key of a table inside the section: SHORTLINK_BACKUP_S3_BUCKET is backup.s3.bucket.
    const table = keyName ? undefined : Object.keys(schema.properties).find((k) => rest.slice(sep + 1).startsWith(`${k.toUpperCase()}_`))
    if (table && isTable(schema.properties[table] as TSchema)) {
      const tableSchema = schema.properties[table] as TObject
      const subName = rest.slice(sep + 2 + table.length)
      const sub = Object.keys(tableSchema.properties).find((k) => k.toUpperCase() === subName)
      if (!sub) {
        problems.push(`${name}: unknown key ${sectionName}.${table}.${subName.toLowerCase()}`)
        continue
      }
      merged[sectionName] ??= {}
      const section = merged[sectionName]
      const given = section[table]
      section[table] = { ...(typeof given === 'object' && given !== null ? given : {}), [sub]: coerceEnv(tableSchema.properties[sub] as AnySchema, value) }
      continue
    }
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
  if (c.metrics.listen) {
    const port = Number(/:(\d+)$/.exec(c.metrics.listen)?.[1])
    if (!(port >= 1 && port <= 65535)) problems.push(`metrics.listen: port must be 1-65535 (got ${JSON.stringify(c.metrics.listen)})`)
    else if (port === c.server.httpsPort || port === c.server.httpPort)
      problems.push('metrics.listen: must not be one of the public ports (server.httpsPort, server.httpPort): metrics are served on their own listener')
  }
  problems.push(...backupChecks(c))
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

function backupChecks(c: Config): string[] {
  const b = c.backup
  const problems: string[] = []
  if (c.store.url && (b.dir || b.every || b.s3.endpoint))
    problems.push("backup: on PostgreSQL, backups are PostgreSQL's own (pg_dump, or your provider's); remove the [backup] section")
  if (b.every && !b.dir) problems.push('backup.dir: required when backup.every is set (where the server writes its backups)')
  if (b.dir && !b.every) problems.push('backup.every: required when backup.dir is set (how often, e.g. "6h")')
  const inside = relative(resolve(c.server.dataDir), resolve(b.dir || '/'))
  if (b.dir && (inside === '' || !(inside.startsWith('..') || isAbsolute(inside))))
    problems.push('backup.dir: must be outside server.dataDir (each backup would hold the ones before it)')
  if (b.every && parseDuration(b.every) < 1000) problems.push(`backup.every: at least 1s (got ${JSON.stringify(b.every)})`)
  if (b.s3.endpoint) {
    if (!b.every) problems.push('backup.s3: uploads go with scheduled backups: set backup.dir and backup.every too')
    if (!b.s3.bucket) problems.push('backup.s3.bucket: required when backup.s3.endpoint is set')
  }
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
