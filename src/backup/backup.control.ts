/**
 * The control socket: `<dataDir>/shortlink.sock`, a Unix socket (mode 0600 in a 0700 data dir:
 * only the server's user and root reach it) through which `shortlink backup` asks the running
 * server for a backup. The server takes it (its stores stay its own: DuckDB allows one process,
 * and the pending clicks are in its memory) and streams the archive back; the command writes
 * it where the operator asked (a path the server's sandbox may not write to) and confirms.
 */
import { chmodSync, existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Server } from 'bun'
import type { Logger } from '../shared'
import type { BackupResult } from './backup.create'
import { BackupBusyError, type BackupService } from './backup.service'

export const controlSocketPath = (dataDir: string) => join(dataDir, 'shortlink.sock')

export interface ControlSocket {
  stop(): void
}

/** Starts the socket (the caller holds the data dir's lock, so a socket file left there is stale). */
export function startControlSocket(dataDir: string, backups: BackupService, log: Logger): ControlSocket {
  const path = controlSocketPath(dataDir)
  rmSync(path, { force: true })
  const server: Server<unknown> = Bun.serve({
    unix: path,
    // A backup of a large store takes minutes before its first byte (Bun honours idleTimeout on Unix sockets; its types omit it there).
    ...({ idleTimeout: 0 } as object),
    async fetch(request) {
      const route = `${request.method} ${new URL(request.url).pathname}`
      if (route === 'GET /status') return Response.json({ pid: process.pid })
      if (route === 'POST /backup') return streamBackup()
      if (route === 'POST /backup/done') {
        const body = (await request.json().catch(() => null)) as { result?: BackupResult } | null
        if (!body?.result?.file || typeof body.result.bytes !== 'number') return Response.json({ error: 'expected { result }' }, { status: 400 })
        backups.succeeded(body.result, 'command')
        return Response.json({ ok: true })
      }
      if (route === 'POST /backup/failed') {
        const body = (await request.json().catch(() => null)) as { error?: string } | null
        backups.failed(String(body?.error ?? 'the command could not write the backup'), 'command')
        return Response.json({ ok: true })
      }
      return Response.json({ error: `unknown request ${route}` }, { status: 404 })
    },
  })
  chmodSync(path, 0o600)

  async function streamBackup(): Promise<Response> {
    // Inside the data dir (a scratch name no backup includes), removed once sent.
    const out = join(dataDir, `.backup-out-${process.pid}-${Date.now()}.tar.zst`)
    let result: BackupResult
    try {
      result = await backups.take(out, 'command')
    } catch (e) {
      const status = e instanceof BackupBusyError ? 409 : 500
      return Response.json({ error: String((e as Error)?.message ?? e) }, { status })
    }
    const cleanup = () => {
      rmSync(out, { force: true })
      rmSync(`${out}.sha256`, { force: true })
    }
    const reader = Bun.file(out).stream().getReader()
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read()
        if (done) {
          controller.close()
          cleanup()
        } else controller.enqueue(value)
      },
      cancel() {
        void reader.cancel()
        cleanup()
      },
    })
    const { file: _, ...meta } = result
    return new Response(body, {
      headers: { 'content-type': 'application/zstd', 'content-length': String(result.bytes), 'x-backup': JSON.stringify(meta) },
    })
  }

  log.info('control socket listening', { socket: path })
  return {
    stop() {
      void server.stop(true)
      if (existsSync(path)) rmSync(path, { force: true })
    },
  }
}
