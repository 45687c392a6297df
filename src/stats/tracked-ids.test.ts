import { expect, test } from 'bun:test'
import { trackedClicksOf } from './click-event'
import { TrackedIds } from './tracked-ids'

/** A click id's shape (22 URL-safe characters, distinct per i); stats does not import the redirect's maker. */
const clickIdLike = (i: number) => `id-${i.toString(36)}`.padEnd(22, '_')

test('the text is what joining <id>@<at> with spaces gives, for any time, across growth', () => {
  const ids = new TrackedIds()
  const parts: string[] = []
  const times = [0, 7, 99_999_999, 100_000_000, 100_000_001, 1_795_640_400_123, Date.now(), 2 ** 48 - 1, 1.5, 12.25]
  for (let i = 0; i < 500; i++) {
    const at = times[i % times.length]!
    const id = clickIdLike(i)
    ids.add(id, at)
    parts.push(`${id}@${at}`)
  }
  expect(ids.text()).toBe(parts.join(' '))
  expect(trackedClicksOf(ids.text())).toHaveLength(500)
  expect(trackedClicksOf(ids.text())[5]).toEqual({ clickId: parts[5]!.split('@')[0]!, at: 1_795_640_400_123 })
})

test('an empty set has no text', () => {
  expect(new TrackedIds().text()).toBe('')
})
