import { expect, test } from 'bun:test'
import { trackedClicksOf } from './click-event'
import { newClickId } from './click-id'
import { TrackedIds } from './tracked-ids'

test('the text is the ids joined with spaces, across growth, and each id gives back its visit time', () => {
  const ids = new TrackedIds()
  const made: { clickId: string; at: number }[] = []
  const t0 = Date.UTC(2026, 10, 26, 7, 0, 0, 5)
  for (let i = 0; i < 500; i++) {
    const at = t0 + i * 37
    const clickId = newClickId(at)
    ids.add(clickId)
    made.push({ clickId, at })
  }
  expect(ids.text()).toBe(made.map((m) => m.clickId).join(' '))
  expect(trackedClicksOf(ids.text(), t0)).toEqual(made)
})

test('rows written with <id>@<at> read the same; an id that carries no time takes the row time', () => {
  const id = newClickId(1_795_640_400_123)
  expect(trackedClicksOf(`abc@7 ${id} ${'x'.repeat(5)}`, 99)).toEqual([
    { clickId: 'abc', at: 7 },
    { clickId: id, at: 1_795_640_400_123 },
    { clickId: 'xxxxx', at: 99 },
  ])
})

test('an empty set has no text', () => {
  expect(new TrackedIds().text()).toBe('')
})
