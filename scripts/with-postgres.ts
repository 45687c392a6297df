#!/usr/bin/env bun
/**
 * Runs a command with a PostgreSQL cluster of its own: Debian's package, initdb into a temp
 * dir, loopback only (test/helpers/postgres.ts). The command gets the cluster's admin URL
 * in SHORTLINK_TEST_PG_URL; the cluster is removed afterwards, whatever the exit code.
 * Usage: bun scripts/with-postgres.ts <command> [args...]
 */
import { endRunSync } from '../test/helpers/cleanup'
import { startPostgres } from '../test/helpers/postgres'

const command = process.argv.slice(2)
if (command.length === 0) {
  process.stderr.write('usage: bun scripts/with-postgres.ts <command> [args...]\n')
  process.exit(2)
}
// However this ends (a cluster that fails to start included), nothing of it stays behind.
process.on('exit', endRunSync)
const pg = await startPostgres()
let code = 1
try {
  process.stderr.write(`PostgreSQL for this run: ${pg.url}\n`)
  const child = Bun.spawn(command, { env: { ...process.env, SHORTLINK_TEST_PG_URL: pg.url }, stdio: ['inherit', 'inherit', 'inherit'] })
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal)
  process.on('SIGINT', forward('SIGINT'))
  process.on('SIGTERM', forward('SIGTERM'))
  code = await child.exited
} finally {
  await pg.destroy()
}
process.exit(code)
