/**
 * One HTTP/1.1 exchange on a raw socket: the bytes exactly as given (fetch would clean a
 * malformed request line, Host or header before sending it), over TLS to the HTTPS port or
 * plain TCP to the HTTP port, and the first answer read back and split into status, headers
 * and body.
 */
import { connect as connectTcp, type Socket } from 'node:net'
import { connect as connectTls } from 'node:tls'

export interface RawAnswer {
  status: number
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>
  body: string
}

export interface RawTarget {
  port: number
  /** The server's CA for TLS (servername localhost); plain TCP when absent. */
  ca?: string
}

/** The length of a complete answer in `text`, or -1 while more is to come (or until the socket closes). */
function completeLength(text: string): number {
  const end = text.indexOf('\r\n\r\n')
  if (end < 0) return -1
  const head = text.slice(0, end).toLowerCase()
  const length = /\r\ncontent-length: *(\d+)/.exec(head)
  if (length) return text.length >= end + 4 + Number(length[1]) ? end + 4 + Number(length[1]) : -1
  if (/\r\ntransfer-encoding: *chunked/.test(head)) return text.includes('\r\n0\r\n\r\n', end) || text.endsWith('0\r\n\r\n') ? text.length : -1
  // No length: a 1xx/204/304 ends with its head, anything else with the connection.
  return /^http\/1\.[01] (1\d\d|204|304)/.test(head) ? end + 4 : -1
}

function parse(text: string): RawAnswer | null {
  const end = text.indexOf('\r\n\r\n')
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text)
  if (!m) return null
  const headers: Record<string, string> = {}
  for (const line of text
    .slice(0, end < 0 ? undefined : end)
    .split('\r\n')
    .slice(1)) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  return { status: Number(m[1]), headers, body: end < 0 ? '' : text.slice(end + 4) }
}

/**
 * Sends `request` and resolves with the first answer, or null when none came within
 * `timeoutMs` (a server may rightly wait for the rest of an incomplete request).
 */
export function rawExchange(target: RawTarget, request: string | Uint8Array, timeoutMs = 3000): Promise<RawAnswer | null> {
  return new Promise((resolve) => {
    let text = ''
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve(parse(text))
    }
    const send = () => socket.write(typeof request === 'string' ? Buffer.from(request, 'latin1') : request)
    const socket: Socket = target.ca
      ? connectTls({ host: '127.0.0.1', port: target.port, servername: 'localhost', ca: target.ca }, send)
      : connectTcp(target.port, '127.0.0.1', send)
    const timer = setTimeout(finish, timeoutMs)
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1')
      const length = completeLength(text)
      if (length >= 0) {
        text = text.slice(0, length)
        finish()
      }
    })
    socket.on('close', finish)
    socket.on('error', finish)
  })
}
