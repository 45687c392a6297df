/**
 * Validation with TypeBox that yields `parameter_error` messages naming the field
 * and the rule. Query strings are coerced here (repeated names become arrays,
 * integers and booleans are parsed) because the framework's own query coercion
 * loses the field name in some errors.
 */

import { Kind, type Static, type StringOptions, type TObject, type TSchema, Type as t } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import './formats'
import type { DocumentDecoration } from 'elysia'
import { parameterError } from './errors'

/** A JSON schema with its keywords (minLength, anyOf, x-rule …) readable: they are open-ended. */
// biome-ignore lint/suspicious/noExplicitAny: schema keywords are open-ended JSON
export type AnySchema = TSchema & Record<string, any>

/**
 * Text without control characters (C0, DEL, C1). They have no business in names, searches
 * or frame texts, and they break what the text is handed to: XML (SVG frames), SQLite FTS
 * queries, headers. `x-rule` words the refusal instead of the raw pattern.
 */
export function PlainText(options: StringOptions = {}) {
  return t.String({ ...options, pattern: '^[^\\u0000-\\u001F\\u007F-\\u009F]*$', 'x-rule': 'must not contain control characters' })
}

/** Human rule text for the first failing keyword of a schema. */
export function describeRule(schema: AnySchema, message: string): string {
  const rules: string[] = []
  const typeMatch = /^Expected (integer|number|boolean|string|object|array)$/.exec(message)
  if (typeMatch) return `must be ${typeMatch[1] === 'integer' || typeMatch[1] === 'object' || typeMatch[1] === 'array' ? 'an' : 'a'} ${typeMatch[1]}`
  // A worded pattern rule names only itself when it is the one broken.
  if (schema['x-rule'] && /to match/.test(message)) return schema['x-rule']
  if (schema.minLength !== undefined || schema.maxLength !== undefined) rules.push(`length must be ${schema.minLength ?? 0}-${schema.maxLength ?? '∞'}`)
  if (schema.minimum !== undefined || schema.maximum !== undefined) rules.push(`must be between ${schema.minimum ?? '-∞'} and ${schema.maximum ?? '∞'}`)
  if (schema.minItems !== undefined || schema.maxItems !== undefined) rules.push(`must have ${schema.minItems ?? 0}-${schema.maxItems ?? '∞'} items`)
  if (schema.uniqueItems) rules.push('items must be unique')
  if (schema.pattern) rules.push(schema['x-rule'] ?? `must match ${schema.pattern}`)
  if (schema.format) rules.push(`must be a valid ${schema.format}`)
  const options = enumValues(schema)
  if (options) rules.push(`must be one of ${options.map((v) => JSON.stringify(v)).join(', ')}`)
  if (rules.length === 0) return message.charAt(0).toLowerCase() + message.slice(1)
  return rules.join('; ')
}

export function enumValues(schema: AnySchema): unknown[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: AnySchema) => 'const' in s)) return schema.anyOf.map((s: AnySchema) => s.const)
  return undefined
}

function fieldName(path: string, prefix: string): string {
  const p = path.replace(/^\//, '').replace(/\//g, '.')
  return prefix ? (p ? `${prefix}.${p}` : prefix) : p || 'body'
}

/** Throws parameter_error for the first violation, naming the field and the rule. */
export function assertValid<S extends TSchema>(schema: S, value: unknown, prefix = ''): asserts value is Static<S> {
  if (Value.Check(schema, value)) return
  const first = firstError(schema, value, '')
  if (!first) throw parameterError(`${prefix || 'value'} is invalid`)
  const field = fieldName(first.path, prefix)
  if (first.message === 'Unexpected property') throw parameterError(`unknown field '${field}'`)
  if (first.value === undefined && first.path) throw parameterError(`'${field}' is required`)
  throw parameterError(`'${field}' ${describeRule(first.schema as AnySchema, first.message)}`)
}

interface FoundError {
  path: string
  message: string
  schema: TSchema
  value: unknown
}

/**
 * The first error, looking inside unions: for `X | null` (and unions whose members
 * differ in kind) the member the value was meant for is checked, so the message names
 * the nested field instead of "expected union value".
 */
function firstError(schema: TSchema, value: unknown, base: string): FoundError | undefined {
  const e = Value.Errors(schema, value).First()
  if (!e) return undefined
  const s = e.schema as AnySchema
  if (Array.isArray(s.anyOf) && e.value !== null && e.value !== undefined && !enumValues(s)) {
    const kind = Array.isArray(e.value) ? 'array' : typeof e.value === 'object' ? 'object' : typeof e.value
    const candidates = (s.anyOf as AnySchema[]).filter((m) => schemaKind(m) === kind)
    if (candidates.length === 1) return firstError(candidates[0]!, e.value, base + e.path)
  }
  return { path: base + e.path, message: e.message, schema: e.schema, value: e.value }
}

function schemaKind(s: AnySchema): string {
  if (s.type === 'integer') return 'number'
  return s.type ?? 'unknown'
}

function isArraySchema(s: AnySchema): boolean {
  return s.type === 'array' || (Array.isArray(s.anyOf) && s.anyOf.some((x: AnySchema) => x.type === 'array'))
}
function scalarType(s: AnySchema): string | undefined {
  if (s.type) return s.type
  const types = (s.anyOf ?? []).map((x: AnySchema) => x.type)
  return types[0]
}

/**
 * Reads a query string against an object schema: repeated names make arrays (a single
 * value is an array of one), integers, numbers and booleans are parsed, unknown names
 * are ignored, and the result is validated.
 */
export function parseQuery<S extends TObject>(schema: S, params: URLSearchParams): Static<S> {
  const out: Record<string, unknown> = {}
  for (const [name, prop] of Object.entries(schema.properties) as [string, AnySchema][]) {
    const raw = params.getAll(name)
    if (raw.length === 0) continue
    if (isArraySchema(prop)) {
      const itemSchema = (prop.type === 'array' ? prop : prop.anyOf.find((x: AnySchema) => x.type === 'array')).items
      out[name] = raw.map((v) => coerceScalar(itemSchema, v))
    } else {
      out[name] = coerceScalar(prop, raw[raw.length - 1]!)
    }
  }
  assertValid(schema, out)
  return out as Static<S>
}

function coerceScalar(schema: AnySchema, v: string): unknown {
  const type = scalarType(schema)
  if (type === 'integer' || type === 'number') {
    const n = v.trim() === '' ? NaN : Number(v)
    return Number.isFinite(n) ? n : v
  }
  if (type === 'boolean') {
    if (v === 'true' || v === '1' || v === '') return true
    if (v === 'false' || v === '0') return false
    return v
  }
  return v
}

/** OpenAPI query parameters from the same schema that validates them. */
/** Elysia's `detail.parameters`: OpenAPI parameter objects. */
export type QueryParameters = NonNullable<DocumentDecoration['parameters']>

export function queryParameters(schema: TObject): QueryParameters {
  const required = new Set(schema.required ?? [])
  return Object.entries(schema.properties).map(([name, prop]) => {
    const p = prop as AnySchema
    const { [Kind]: _k, ...plain } = p
    return {
      name,
      in: 'query',
      required: required.has(name),
      description: p.description,
      // A TypeBox schema is a JSON schema: the OpenAPI 3.1 document takes it as it is.
      schema: plain as QueryParameters[number] extends { schema?: infer S } ? S : never,
      ...(isArraySchema(p) ? { style: 'form', explode: true } : {}),
    }
  })
}
