/** String formats used by the schemas, registered once for TypeBox validation. */
import { FormatRegistry } from '@sinclair/typebox'

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i

export function isDateTime(v: string): boolean {
  return ISO_DATE_TIME.test(v) && !Number.isNaN(Date.parse(v))
}

export function isUri(v: string): boolean {
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(v)) return false
  try {
    new URL(v)
    return true
  } catch {
    return false
  }
}

if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', isDateTime)
if (!FormatRegistry.Has('uri')) FormatRegistry.Set('uri', isUri)
if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v))
