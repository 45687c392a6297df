import { expect, test } from 'bun:test'
import { clickTimeOf, newClickId } from './click-id'

test('click ids: 22 URL-safe characters, distinct, carrying the visit time', () => {
  const at = Date.UTC(2026, 10, 25, 21, 0, 0, 123)
  const ids = new Set(Array.from({ length: 10_000 }, () => newClickId(at)))
  expect(ids.size).toBe(10_000)
  for (const id of [...ids].slice(0, 100)) {
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/)
    expect(clickTimeOf(id)).toBe(at)
  }
  // The time's characters as the first version wrote them (ids already handed out must still parse).
  expect(newClickId(at).slice(0, 8)).toBe('AaIUghj7')
  expect(newClickId(2 ** 48 - 1).slice(0, 8)).toBe('________')
  expect(clickTimeOf(`${newClickId(0).slice(0, 8)}${'x'.repeat(14)}`)).toBe(0)
  // The random part spreads over the whole alphabet.
  const used = new Set([...ids].flatMap((id) => [...id.slice(8)]))
  expect(used.size).toBe(64)
  expect(clickTimeOf('short')).toBeNull()
  expect(clickTimeOf(`${'a'.repeat(21)}!`)).toBeNull()
})
