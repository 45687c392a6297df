/// <reference types="bun" />
// Run explicitly: `bun test web/app` (bun test ./src does not reach web/).
import { expect, test } from 'bun:test'
import { BROWSER_VALUES, DEVICE_VALUES, OS_VALUES } from '../../../../src/stats/click-event'
import { CHOICES } from './view'

// The browser bundle cannot carry the server's vocabulary module; this keeps its copies true.
test("the statistics filters offer the API's device, browser and OS values", () => {
  expect([CHOICES.device, CHOICES.browser, CHOICES.os]).toEqual([DEVICE_VALUES, BROWSER_VALUES, OS_VALUES])
})
