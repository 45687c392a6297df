/**
 * Standard Webhooks signatures (standardwebhooks.com): the secret is `whsec_` + base64 of
 * random bytes; a delivery carries `webhook-id` (the event id, the same on every retry),
 * `webhook-timestamp` (seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">` keyed with the secret's decoded bytes. Tests verify these with
 * the specification's own reference library (npm `standardwebhooks`), not with this file.
 */
import { createHmac, randomBytes } from 'node:crypto'

const PREFIX = 'whsec_'

/** A new signing secret: 32 random bytes. */
export function newSecret(): string {
  return PREFIX + randomBytes(32).toString('base64')
}

/** The `webhook-signature` value of one delivery. */
export function signatureOf(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`
}

/** The three headers of a delivery sent at `now` (ms). */
export function signedHeaders(secret: string, id: string, now: number, body: string): Record<string, string> {
  const timestamp = Math.floor(now / 1000)
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureOf(secret, id, timestamp, body) }
}
