/**
 * Why `serve` could not start, as the one line it prints (`shortlink: …`): the cause and the
 * path, port or setting it concerns. Never a stack trace or a source listing; an error this
 * does not know still gets one line, with where it was thrown.
 */
import { type Config, ConfigError } from './config'
import { DataDirError, DataDirLockedError, fileProblem, storePath } from './store'
import { CertificateFileError, ListenError } from './tls'

/** A start step that failed for a reason its message says in full. */
export class StartError extends Error {}

/** The errors whose message already is the whole sentence. */
const EXPLAINED = [StartError, DataDirError, DataDirLockedError, ListenError, CertificateFileError]

export function startFailure(e: unknown, config?: Config): string {
  if (e instanceof ConfigError) return `invalid configuration: ${e.problems.join('; ')}`
  if (EXPLAINED.some((type) => e instanceof type)) return oneLine((e as Error).message)
  const err = (e ?? {}) as { code?: unknown; path?: unknown; message?: unknown; name?: unknown; stack?: unknown }
  const code = typeof err.code === 'string' ? err.code : ''
  const message = oneLine(String(err.message ?? e))
  if (code.startsWith('SQLITE_')) {
    const where = config && !config.store.url ? storePath(config.server.dataDir) : 'the SQLite store'
    return `cannot open the store ${where}: ${sqliteProblem(code, message)}`
  }
  if (typeof err.path === 'string' && /^E[A-Z]+$/.test(code)) {
    const dataDir = config?.server.dataDir
    const inDataDir = dataDir && (err.path === dataDir || err.path.startsWith(`${dataDir}/`))
    return inDataDir ? `cannot use the data dir ${dataDir}: ${fileProblem(e)} (${err.path})` : `cannot use ${err.path}: ${fileProblem(e)}`
  }
  const at = typeof err.stack === 'string' ? /\n\s*at .*?\(?([^()\s]+:\d+:\d+)\)?\s*$/m.exec(err.stack)?.[1] : undefined
  return `cannot start: ${message}${at ? ` (at ${at})` : ''}`
}

function sqliteProblem(code: string, message: string): string {
  if (code === 'SQLITE_FULL') return 'the disk is full'
  if (code.startsWith('SQLITE_READONLY')) return 'it is read-only (check the data dir and its file system)'
  if (code.startsWith('SQLITE_CANTOPEN')) return 'it cannot be opened (check the data dir and its permissions)'
  if (code === 'SQLITE_NOTADB') return 'it is not a SQLite database'
  if (code.startsWith('SQLITE_CORRUPT')) return 'it is damaged (restore it from a backup)'
  if (code.startsWith('SQLITE_IOERR')) return `an input/output error (${message})`
  return message
}

const oneLine = (s: string) =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join('; ')
