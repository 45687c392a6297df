import { expect, test } from 'bun:test'
import { createReadiness, storeCheck } from '.'

test('ready when every check passes; a failing, throwing or hanging check makes it not ready', async () => {
  const r = createReadiness()
  let storeUp = true
  r.add('store', () => storeUp)
  r.add('listeners', async () => true)
  expect(await r.report()).toEqual({ ready: true, checks: { store: 'ok', listeners: 'ok' } })
  storeUp = false
  expect(await r.report()).toEqual({ ready: false, checks: { store: 'failing', listeners: 'ok' } })
  storeUp = true
  const removeThrowing = r.add('clickWriter', () => {
    throw new Error('worker gone')
  })
  expect((await r.report()).checks.clickWriter).toBe('failing')
  removeThrowing()
  r.add('hangs', () => new Promise<boolean>(() => {}))
  const started = performance.now()
  const report = await r.report()
  expect(report).toEqual({ ready: false, checks: { store: 'ok', listeners: 'ok', hangs: 'failing' } })
  expect(performance.now() - started).toBeGreaterThanOrEqual(1900)
})

test('the store check pings once at a time, reuses its answer briefly and recovers by itself', async () => {
  let t = 0
  let pings = 0
  let up = false
  const check = storeCheck(
    async () => {
      pings++
      if (!up) throw new Error('connection refused')
    },
    { reuseMs: 1000, now: () => t },
  )
  const [a, b] = await Promise.all([check(), check()])
  expect([a, b, pings]).toEqual([false, false, 1])
  up = true
  expect(await check()).toBe(false) // reused within a second
  t += 1000
  expect(await check()).toBe(true)
  expect(pings).toBe(2)
})
