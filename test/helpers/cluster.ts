/**
 * Three (or `size`) nodes of the binary on one PostgreSQL started here (loopback): the first makes
 * the self-signed certificate, the others serve the same one (so one CA verifies every node), all
 * with the same admin key. What a node's output says is printed when it exited by itself (or with
 * DEBUG_CLUSTER set).
 */
import { startPostgres, type TestPostgres } from './postgres'
import { type StartOptions, startServer, type TestServer } from './server'

export interface Cluster {
  pg: TestPostgres
  storeUrl: string
  /** The running nodes; a test that kills one may put a new one in its place with `startNode`. */
  nodes: TestServer[]
  startNode(i: number): Promise<TestServer>
  stop(): Promise<void>
}

export async function startCluster(o: {
  database: string
  adminKey: string
  /** The nodes' config (besides the shared certificate). */
  toml: string
  size?: number
  publicBaseUrl?: string
}): Promise<Cluster> {
  const pg = await startPostgres()
  const storeUrl = await pg.createDatabase(o.database)
  const nodes: TestServer[] = []
  const startNode = (i: number): Promise<TestServer> => {
    const first = nodes[0]
    const tls = i === 0 || !first ? '' : `[tls]\nmode = "files"\ncertFile = "${first.dir}/data/tls/cert.pem"\nkeyFile = "${first.dir}/data/tls/key.pem"\n`
    const options: StartOptions = { storeUrl, env: { SHORTLINK_ADMIN_KEY: o.adminKey }, ca: first?.ca, toml: `${tls}${o.toml}` }
    if (o.publicBaseUrl) options.publicBaseUrl = o.publicBaseUrl
    return startServer(options)
  }
  const cluster: Cluster = {
    pg,
    storeUrl,
    nodes,
    startNode,
    async stop() {
      for (const n of nodes) if (process.env.DEBUG_CLUSTER || (n.proc.exitCode !== null && n.proc.signalCode !== 'SIGKILL')) console.error(n.output())
      await Promise.all(nodes.map((n) => n.stop().catch(() => 0)))
      await pg.destroy()
    },
  }
  try {
    nodes.push(await startNode(0))
    nodes.push(...(await Promise.all(Array.from({ length: (o.size ?? 3) - 1 }, (_, i) => startNode(i + 1)))))
  } catch (e) {
    await cluster.stop().catch(() => {})
    throw e
  }
  return cluster
}
