/**
 * Domain names as the API accepts them: IDN in Unicode or punycode, any case, an
 * optional trailing dot; stored and compared as lower-case punycode (what browsers put
 * in the Host header and SNI).
 */

import { isIP } from 'node:net'
import { domainToASCII } from 'node:url'
import { parameterError } from '../shared'

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/
// Characters that would make URL parsing read part of the input as something else.
const NOT_IN_A_NAME = /[\s/?#@:[\]\\%]/

/** Lower-case punycode form, or null when the text is not a usable DNS host name. */
export function toAsciiDomain(input: string): string | null {
  let name = input.trim().toLowerCase()
  if (name.endsWith('.')) name = name.slice(0, -1)
  if (!name || NOT_IN_A_NAME.test(name) || isIP(name)) return null
  const ascii = domainToASCII(name)
  if (!ascii || ascii.length > 253 || isIP(ascii)) return null
  const labels = ascii.split('.')
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null
  // An all-numeric last label is how IPv4 shorthand ("10.1") slips through.
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return null
  return ascii
}

/** For request bodies: the normalised name or a parameter_error naming the field. */
export function parseDomainName(input: string, field = 'domain'): string {
  const trimmed = input.trim()
  if (isIP(trimmed) || isIP(trimmed.replace(/^\[|\]$/g, ''))) throw parameterError(`'${field}' must be a domain name, not an IP address`)
  const ascii = toAsciiDomain(trimmed)
  if (!ascii)
    throw parameterError(
      `'${field}' must be a DNS host name with at least two labels of letters, digits and hyphens (Unicode names are converted to punycode), e.g. links.example.com`,
    )
  return ascii
}

/** For lookups by path or query: lenient, never throws. */
export function normaliseHost(input: string): string {
  let h = input.trim().toLowerCase()
  if (h.endsWith('.')) h = h.slice(0, -1)
  return toAsciiDomain(h) ?? h
}
