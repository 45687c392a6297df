/**
 * The invalidation bus against a real PostgreSQL, three buses standing for three nodes:
 * keys published in a transaction arrive at commit (never after a rollback), oversize keys
 * and big batches become '*', a restart flushes every subscriber, an epoch never heard of
 * flushes its channel, and close() leaves a process that exits by itself.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startPostgres, type TestPostgres } from '../../../test/helpers/postgres'
import { freePort } from '../../../test/helpers/server'
import { createInvalidationBus, FLUSH, type InvalidationBus, MAX_KEY_BYTES, MAX_KEYS_PER_PUBLISH } from './invalidation'

const quiet = { info() {}, warn() {}, error() {} }
const CHANNELS = ['links', 'auth'] as const

/** Everything a subscriber heard, and a promise for "heard enough" with a deadline. */
function record(bus: InvalidationBus, channel: string) {
  const keys: string[] = []
  const waiters = new Set<() => void>()
  bus.on(channel, (key) => {
    keys.push(key)
    for (const w of waiters) w()
  })
  return {
    keys,
    until(done: (keys: string[]) => boolean, ms: number, what: string): Promise<void> {
      if (done(keys)) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!done(keys)) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve()
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`${channel}: ${what} not within ${ms} ms; heard ${JSON.stringify(keys.map((k) => k.slice(0, 40)))}`))
        }, ms)
        waiters.add(check)
      })
    },
  }
}

/** For things with no event (a counter): checks every 20 ms until true, or fails at the deadline. */
async function eventually(done: () => boolean, ms: number, what: string) {
  const deadline = Date.now() + ms
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what} not within ${ms} ms`)
    await Bun.sleep(20)
  }
}

type Node = { bus: InvalidationBus } & Record<(typeof CHANNELS)[number], ReturnType<typeof record>>

let pg: TestPostgres
let url: string
let writer: SQL
let nodes: Node[]

async function startNode(): Promise<Node> {
  const bus = await createInvalidationBus({ url, channels: CHANNELS, epochPollMs: 100, log: quiet })
  return { bus, links: record(bus, 'links'), auth: record(bus, 'auth') }
}

beforeAll(async () => {
  pg = await startPostgres()
  url = await pg.createDatabase('invalidation')
  writer = new SQL(url)
  await writer`CREATE TABLE things (id text PRIMARY KEY)`
  nodes = [await startNode(), await startNode(), await startNode()]
})
afterAll(async () => {
  for (const n of nodes ?? []) await n.bus.close()
  await writer?.close()
  await pg?.destroy()
})
beforeEach(() => {
  for (const n of nodes) for (const c of CHANNELS) n[c].keys.length = 0
})

const heardOn = (key: string) => (keys: string[]) => keys.includes(key)

describe('invalidation bus', () => {
  test('a key published in a committed transaction reaches the other nodes within a second; a rolled-back one never does', async () => {
    const [a, b, c] = nodes as [Node, Node, Node]
    await writer
      .begin(async (tx) => {
        await tx`INSERT INTO things VALUES ('rolled-back')`
        await a.bus.publish(tx, 'links', 'example.com/rolled-back')
        throw new Error('roll back')
      })
      .catch(() => {})
    await writer.begin(async (tx) => {
      await tx`INSERT INTO things VALUES ('summer')`
      await a.bus.publish(tx, 'links', 'example.com/summer')
    })
    await Promise.all([a, b, c].map((n) => n.links.until(heardOn('example.com/summer'), 1000, 'the committed key')))
    // Notifications arrive in commit order: the rolled-back key would have come first.
    for (const n of [a, b, c]) expect(n.links.keys).toEqual(['example.com/summer'])
    for (const n of [a, b, c]) expect(n.auth.keys).toEqual([])
  })

  test('several keys arrive one by one; more than the batch limit, or a key over the payload limit, become one "*" and the transaction still commits', async () => {
    const [, b] = nodes as [Node, Node]
    await writer.begin((tx) => nodes[0]!.bus.publish(tx, 'auth', ['key_1', 'key_2', 'key_1', 'key_3']))
    await b.auth.until((k) => k.length >= 3, 1000, 'three keys')
    expect(b.auth.keys.sort()).toEqual(['key_1', 'key_2', 'key_3'])

    b.auth.keys.length = 0
    const many = Array.from({ length: MAX_KEYS_PER_PUBLISH + 1 }, (_, i) => `key_${i}`)
    await writer.begin((tx) => nodes[0]!.bus.publish(tx, 'auth', many))
    await b.auth.until(heardOn(FLUSH), 1000, 'the flush for a big batch')
    expect(b.auth.keys).toEqual([FLUSH])

    const longest = 'k'.repeat(MAX_KEY_BYTES)
    for (const [i, oversize] of ['x'.repeat(8000), 'é'.repeat(MAX_KEY_BYTES / 2 + 1), 'nul\0inside'].entries()) {
      b.links.keys.length = 0
      await writer.begin(async (tx) => {
        await tx`INSERT INTO things VALUES (${`oversize-${i}`})`
        await nodes[0]!.bus.publish(tx, 'links', [longest, oversize])
      })
      await b.links.until(heardOn(FLUSH), 1000, 'the flush for an oversize key')
      expect(b.links.keys).toEqual([FLUSH])
      expect(await writer`SELECT id FROM things WHERE id = ${`oversize-${i}`}`).toHaveLength(1)
    }
    // The longest key that fits goes through as itself.
    b.links.keys.length = 0
    await writer.begin((tx) => nodes[0]!.bus.publish(tx, 'links', longest))
    await b.links.until(heardOn(longest), 1000, 'the longest key')
  })

  test('an epoch that moved without its notification flushes the channel; heard publishes do not', async () => {
    const [a, b, c] = nodes as [Node, Node, Node]
    for (let i = 0; i < 5; i++) await writer.begin((tx) => a.bus.publish(tx, 'links', `heard-${i}`))
    // The five keys (C's list also holds what the test before published to it).
    await Promise.all([b, c].map((n) => n.links.until((k) => k.filter((key) => key.startsWith('heard-')).length === 5, 1000, 'five keys')))
    // Two polls later every one of those epochs has been judged: none may count as missed.
    const polls = b.bus.stats().polls
    await eventually(() => b.bus.stats().polls >= polls + 3, 5000, 'three epoch polls')
    expect(b.links.keys).not.toContain(FLUSH)
    expect(b.bus.stats().flushes.missedEpoch).toBe(0)

    // A write whose notification was lost: the epoch moves, nothing is sent.
    await writer`UPDATE cache_epochs SET epoch = epoch + 1 WHERE channel = 'links'`
    await Promise.all([a, b, c].map((n) => n.links.until(heardOn(FLUSH), 5000, 'the flush for the missed epoch')))
    expect(b.bus.stats().flushes.missedEpoch).toBe(1)
    expect(b.auth.keys).toEqual([])
  })

  test('PostgreSQL stopped and started: every subscriber of every node gets "*", then publishes arrive again', async () => {
    await pg.stop()
    await pg.start()
    await Promise.all(nodes.flatMap((n) => CHANNELS.map((c) => n[c].until(heardOn(FLUSH), 20_000, 'the flush after the restart'))))
    for (const n of nodes) expect(n.bus.stats().flushes.resubscribed).toBe(CHANNELS.length)
    await writer.begin((tx) => nodes[0]!.bus.publish(tx, 'auth', 'key_after_restart'))
    await Promise.all(nodes.map((n) => n.auth.until(heardOn('key_after_restart'), 1000, 'a key after the restart')))
  })

  test('PostgreSQL unreachable at start: creating the bus fails (Bun.SQL retries a LISTEN only once it had one)', async () => {
    const nowhere = `postgres://postgres@127.0.0.1:${await freePort()}/invalidation`
    await expect(createInvalidationBus({ url: nowhere, channels: CHANNELS, log: quiet })).rejects.toMatchObject({
      code: 'ERR_POSTGRES_CONNECTION_REFUSED',
    })
  })

  /** Runs the fixture node in a child process; resolves once it printed "ready". */
  async function childNode() {
    const child = Bun.spawn([process.execPath, `${import.meta.dir}/invalidation.test-fixtures.ts`, url], {
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const decoder = new TextDecoder()
    let out = ''
    const reader = child.stdout.getReader()
    const readUntil = async (word: string) => {
      while (!out.includes(word)) {
        const { value, done } = await reader.read()
        if (done) throw new Error(`child ended before "${word}": ${out}`)
        out += decoder.decode(value)
      }
    }
    await readUntil('ready')
    return {
      async closeAndExit() {
        child.stdin.end()
        await readUntil('closed')
        const exited = await Promise.race([child.exited, Bun.sleep(10_000).then(() => 'still running')])
        if (exited === 'still running') child.kill()
        expect(exited).toBe(0)
      },
    }
  }

  test('close() leaves nothing running: the process exits by itself', async () => {
    await (await childNode()).closeAndExit()
  })

  test('close() while PostgreSQL is down and the listener is reconnecting: the process still exits', async () => {
    const child = await childNode()
    await pg.stop()
    try {
      await child.closeAndExit()
    } finally {
      await pg.start()
    }
  })
})
