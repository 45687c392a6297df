/**
 * A small round-robin TCP (L4) load balancer on loopback, as operators put in front of a
 * cluster: each new client connection goes to the next backend, bytes pass through untouched
 * (TLS ends at the node). A backend that refuses is skipped for that connection.
 */
import type { Socket, TCPSocketListener } from 'bun'

export interface RoundRobinProxy {
  port: number
  /** Connections handed to each backend port, in order of `backends`. */
  counts(): number[]
  stop(): void
}

interface Pipe {
  peer: Socket<Pipe> | null
  /** Bytes from the client before the backend connection is open. */
  early: Uint8Array[]
  /** Bytes the kernel did not take yet (written on drain): nothing is dropped under backpressure. */
  pending: Uint8Array[]
}

function send(to: Socket<Pipe> | null, chunk: Uint8Array) {
  if (!to) return
  if (to.data.pending.length > 0) {
    to.data.pending.push(new Uint8Array(chunk))
    return
  }
  const n = to.write(chunk)
  if (n < chunk.byteLength) to.data.pending.push(new Uint8Array(chunk.subarray(Math.max(0, n))))
}

function drain(s: Socket<Pipe>) {
  while (s.data.pending.length > 0) {
    const head = s.data.pending[0]!
    const n = s.write(head)
    if (n < head.byteLength) {
      s.data.pending[0] = head.subarray(Math.max(0, n))
      return
    }
    s.data.pending.shift()
  }
}

/** `port` 0 (the default) takes any free port. */
export function startRoundRobinProxy(backends: number[], port = 0): RoundRobinProxy {
  let next = 0
  const counts = backends.map(() => 0)

  const connectBackend = async (client: Socket<Pipe>, tries: number): Promise<void> => {
    const i = next++ % backends.length
    try {
      const upstream = await Bun.connect<Pipe>({
        hostname: '127.0.0.1',
        port: backends[i]!,
        data: { peer: client, early: [], pending: [] },
        socket: {
          data: (s, chunk) => send(s.data.peer, chunk),
          drain,
          close: (s) => void s.data.peer?.end(),
          error: (s) => void s.data.peer?.end(),
        },
      })
      counts[i]!++
      client.data.peer = upstream
      for (const chunk of client.data.early) send(upstream, chunk)
      client.data.early = []
    } catch {
      if (tries + 1 < backends.length) return connectBackend(client, tries + 1)
      client.end()
    }
  }

  const server: TCPSocketListener<Pipe> = Bun.listen<Pipe>({
    hostname: '127.0.0.1',
    port,
    socket: {
      open(client) {
        client.data = { peer: null, early: [], pending: [] }
        void connectBackend(client, 0)
      },
      data(client, chunk) {
        if (client.data.peer) send(client.data.peer, chunk)
        else client.data.early.push(new Uint8Array(chunk))
      },
      drain,
      close: (client) => void client.data.peer?.end(),
      error: (client) => void client.data.peer?.end(),
    },
  })
  return { port: server.port, counts: () => [...counts], stop: () => server.stop(true) }
}
