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
