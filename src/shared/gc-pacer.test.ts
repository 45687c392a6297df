import { expect, test } from 'bun:test'
import { createGcPacer } from './gc-pacer'

test('collects once per interval while requests are served, never while idle', () => {
  let collections = 0
  let tick = () => {}
  let stopped = false
  const pacer = createGcPacer({
    collect: () => collections++,
    every: (fn) => {
      tick = fn
      return () => {
        stopped = true
      }
    },
  })
  tick()
  tick()
  expect(collections).toBe(0)
  pacer.served()
  pacer.served()
  tick()
  expect(collections).toBe(1)
  tick()
  expect(collections).toBe(1)
  pacer.served()
  tick()
  expect(collections).toBe(2)
  pacer.stop()
  expect(stopped).toBe(true)
})

test('collects fully once when the server goes quiet (and once after start-up), not again until requests came', () => {
  let full = 0
  let tick = () => {}
  const pacer = createGcPacer({
    collect: () => {},
    settle: () => full++,
    settleAfterTicks: 3,
    every: (fn) => {
      tick = fn
      return () => {}
    },
  })
  tick()
  tick()
  expect(full).toBe(0)
  tick()
  expect(full).toBe(1) // start-up's garbage
  for (let i = 0; i < 10; i++) tick()
  expect(full).toBe(1)
  pacer.served()
  tick() // serving: eden collections only
  tick()
  tick()
  expect(full).toBe(1)
  tick()
  expect(full).toBe(2) // three quiet ticks after the last request
  pacer.served()
  tick()
  expect(full).toBe(2)
})
