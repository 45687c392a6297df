/** JSON-lines logger on stderr: one object per event, easy to grep and to ship. */
export type LogFields = Record<string, unknown>
export interface Logger {
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
}

export function createLogger(quiet = false): Logger {
  const write = (level: string, msg: string, fields?: LogFields) => {
    if (quiet && level === 'info') return
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`)
  }
  return {
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  }
}
