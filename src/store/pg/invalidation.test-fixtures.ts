/**
 * A node in a child process, for the test that close() leaves nothing running: it starts a
 * bus on `argv[2]`, publishes and hears its own key, prints "ready", and on a line "close"
 * on stdin closes the bus and prints "closed". The process must then exit by itself.
 */
import { SQL } from 'bun'
import { createInvalidationBus } from './invalidation'

const url = process.argv[2]!
const quiet = { info() {}, warn() {}, error() {} }
const bus = await createInvalidationBus({ url, channels: ['links', 'auth'], epochPollMs: 50, log: quiet })
const heard = new Promise<void>((resolve) => bus.on('links', (key) => key === 'hello' && resolve()))
const writer = new SQL(url, { max: 1 })
await writer.begin((tx) => bus.publish(tx, 'links', 'hello'))
await writer.close()
await heard
console.log('ready')
await Bun.stdin.text()
await bus.close()
console.log('closed')
