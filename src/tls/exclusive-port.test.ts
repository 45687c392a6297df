/**
 * One server per port: a listener with SO_REUSEPORT claims its port, so a second server
 * (another process) is refused, whether it came first or joined at the same instant.
 * The other process is real: a child that listens with SO_REUSEPORT, as a second shortlink would.
 */
import { afterEach, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import { freePort } from '../../test/helpers/server'
import { foreignListeners, ListenError, listenExclusively } from './exclusive-port'

const children: Subprocess[] = []
const servers: { stop(force?: boolean): unknown }[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop(true)
  for (const c of children.splice(0)) {
    c.kill('SIGKILL')
    await c.exited
  }
})

const withReusePort = (port: number) => {
  const s = Bun.serve({ port, hostname: '127.0.0.1', reusePort: true, fetch: () => new Response('ours') })
  servers.push(s)
  return s
}

/** Another process listening on `port` with SO_REUSEPORT; resolves once it listens. */
async function otherProcessOn(port: number): Promise<Subprocess> {
  const child = Bun.spawn(
    [
      process.execPath,
      '-e',
      `Bun.serve({ port: ${port}, hostname: '127.0.0.1', reusePort: true, fetch: () => new Response('theirs') }); console.log('listening')`,
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  )
  children.push(child)
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader()
  const { value } = await reader.read()
  expect(new TextDecoder().decode(value)).toContain('listening')
  return child
}

test('a port another process listens on (with SO_REUSEPORT too) is refused with a sentence naming it', async () => {
  const port = await freePort()
  await otherProcessOn(port)
  const claimed = (() => {
    try {
      return listenExclusively('server.httpsPort', '127.0.0.1', port, withReusePort)
    } catch (e) {
      return e
    }
  })()
  expect(claimed).toBeInstanceOf(ListenError)
  expect((claimed as ListenError).message).toBe(`port ${port} on 127.0.0.1 (server.httpsPort) is in use by another process; stop it or choose another port`)
  expect(servers).toHaveLength(0) // refused before binding
})

test('a process that joins between the probe and the bind is seen, and this listener stops', async () => {
  const port = await freePort()
  let ours: ReturnType<typeof withReusePort> | undefined
  let joined: Promise<Subprocess> | undefined
  const claimed = (() => {
    try {
      return listenExclusively('server.httpsPort', '127.0.0.1', port, (p) => {
        ours = withReusePort(p)
        joined = otherProcessOn(p)
        // The check runs right after this returns: hold it until the other process listens (a kernel table poll).
        const deadline = Date.now() + 30_000
        while (foreignListeners(p) === 0 && Date.now() < deadline) Bun.sleepSync(5)
        return ours
      })
    } catch (e) {
      return e
    }
  })()
  await joined
  expect((claimed as ListenError).message).toBe(
    `port ${port} on 127.0.0.1 (server.httpsPort) is in use by another process (another server started on it at the same moment); stop it or choose another port`,
  )
  // Ours closed its socket: only the other process answers now.
  const r = await fetch(`http://127.0.0.1:${port}/`)
  expect(await r.text()).toBe('theirs')
  expect(ours).toBeDefined()
})

test("this process's own listeners on its port are not foreign; another process's are", async () => {
  const port = await freePort()
  const first = listenExclusively('server.httpsPort', '127.0.0.1', port, withReusePort)
  withReusePort(port) // a certificate swap's next listener
  expect(first.port).toBe(port)
  expect(foreignListeners(port)).toBe(0)
  const other = await otherProcessOn(port)
  expect(foreignListeners(port)).toBe(1)
  other.kill('SIGKILL')
  await other.exited
  expect(foreignListeners(port)).toBe(0)
})
